import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createSql } from '@/db/connect';
import { migrateDatabase } from '@/server/migrate';
import { parseEnv, ConfigError } from '@/server/env';

const run = promisify(execFile);
const admin = createSql(inject('adminDatabaseUrl'), { max: 1 });
const name = `msg_empty_${randomBytes(4).toString('hex')}`;
const url = (() => {
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  return u.toString();
})();

afterAll(async () => {
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
});

describe('migrations', () => {
  it('build the whole schema from an empty database, and a second run changes nothing', async () => {
    await admin.unsafe(`create database "${name}"`);
    await migrateDatabase(url);
    const sql = createSql(url, { max: 1 });
    try {
      const tables = await sql<{ table_name: string }[]>`
        select table_name from information_schema.tables where table_schema = 'public' order by table_name`;
      expect(tables.map((t) => t.table_name)).toEqual(
        expect.arrayContaining([
          'api_keys',
          'business_email_senders',
          'business_sms_numbers',
          'businesses',
          'clients',
          'conversations',
          'idempotency_keys',
          'locations',
          'messages',
          'rate_limit_buckets',
          'sessions',
          'staff',
          'webhook_events',
        ]),
      );
      const ext = await sql<{ extname: string }[]>`select extname from pg_extension order by extname`;
      expect(ext.map((e) => e.extname)).toEqual(expect.arrayContaining(['pg_trgm', 'btree_gin']));
      const trgm = await sql`select indexname from pg_indexes where indexname = 'message_search_content_trgm_idx'`;
      expect(trgm).toHaveLength(1);
      const boss = await sql`select 1 from information_schema.tables where table_schema = 'pgboss' and table_name = 'job'`;
      expect(boss).toHaveLength(1);
      const applied = await sql`select count(*)::int as n from drizzle.__drizzle_migrations`;
      await migrateDatabase(url);
      const again = await sql`select count(*)::int as n from drizzle.__drizzle_migrations`;
      expect(again[0]!.n).toBe(applied[0]!.n);
    } finally {
      await sql.end();
    }
  });
});

describe('a wrong DATABASE_URL', () => {
  it('is refused at configuration time when it is not a postgres URL', () => {
    expect(() => parseEnv({ DATABASE_URL: 'mysql://root@localhost/db' })).toThrow(ConfigError);
    expect(() => parseEnv({ DATABASE_URL: 'mysql://root@localhost/db' })).toThrow(
      /DATABASE_URL: must be a URL starting with postgres:/,
    );
    expect(() => parseEnv({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => parseEnv({ NODE_ENV: 'production' })).toThrow(/PLATFORM_API_KEY: is required in production/);
  });

  it('stops `npm run db:migrate` with a sentence naming the server, when nothing answers there', async () => {
    const result = await run('node_modules/.bin/tsx', ['server/cli/migrate.ts'], {
      env: { ...process.env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Cannot connect to PostgreSQL at 127.0.0.1:1/nowhere');
    expect(result.stderr).toContain('ECONNREFUSED');
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});
