import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createSql } from './client';
import { migrateDatabase } from './migrate';

/**
 * Migration 0010 carries the old per-client opt-out flags into opt_outs by address: a database is
 * migrated up to 0009 (a copy of the migrations folder whose journal stops there), given flagged
 * clients, then migrated to the end.
 */
const migrations = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
const admin = createSql(inject('adminDatabaseUrl'), { max: 1 });
const name = `msg_optouts_${randomBytes(4).toString('hex')}`;
const url = (() => {
  const u = new URL(inject('adminDatabaseUrl'));
  u.pathname = `/${name}`;
  return u.toString();
})();
let folder: string | null = null;

afterAll(async () => {
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('migration 0010 (opt_outs)', () => {
  it('turns every opted-out client flag into an opt-out of its phone number or lower-cased email, then drops the flags', async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'migrations-0009-'));
    await cp(migrations, folder, { recursive: true });
    const journalPath = path.join(folder, 'meta', '_journal.json');
    const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: { idx: number }[] };
    journal.entries = journal.entries.filter((e) => e.idx <= 9);
    await writeFile(journalPath, JSON.stringify(journal));

    await admin.unsafe(`create database "${name}"`);
    const sql = createSql(url, { max: 1 });
    try {
      await migrate(drizzle(sql), { migrationsFolder: folder });
      const [a] = await sql<
        { id: number }[]
      >`insert into businesses (name, timezone) values ('A', 'America/New_York') returning id`;
      const [b] = await sql<
        { id: number }[]
      >`insert into businesses (name, timezone) values ('B', 'America/New_York') returning id`;
      const A = a!.id;
      const B = b!.id;
      await sql`
        insert into clients (business_id, name, phone_number, email, opted_out_sms, opted_out_email) values
          (${A}, 'sms out', '+14155550001', 'one@example.test', true, false),
          (${A}, 'same phone, flag not set', '+14155550001', null, false, false),
          (${A}, 'duplicate row, also out', '+14155550001', null, true, false),
          (${A}, 'email out', '+14155550002', 'Pat@Example.TEST', false, true),
          (${A}, 'both out, no phone', null, 'sam@example.test', true, true),
          (${A}, 'not out', '+14155550003', 'kim@example.test', false, false),
          (${B}, 'other business', '+14155550001', 'pat@example.test', false, true)`;

      await sql.end();
      await migrateDatabase(url);
    } finally {
      await sql.end().catch(() => {});
    }

    const after = createSql(url, { max: 1 });
    try {
      const rows = await after<{ business_id: number; channel: string; address: string; source: string; message_id: null }[]>`
        select business_id, channel, address, source, message_id from opt_outs order by business_id, channel, address`;
      const [ids] = await after<{ a: number; b: number }[]>`select min(id) as a, max(id) as b from businesses`;
      const { a: A, b: B } = ids!;
      expect(rows.map((r) => ({ ...r }))).toEqual([
        { business_id: A, channel: 'email', address: 'pat@example.test', source: 'migrated', message_id: null },
        { business_id: A, channel: 'email', address: 'sam@example.test', source: 'migrated', message_id: null },
        { business_id: A, channel: 'sms', address: '+14155550001', source: 'migrated', message_id: null },
        { business_id: B, channel: 'email', address: 'pat@example.test', source: 'migrated', message_id: null },
      ]);
      const flags = await after`
        select 1 from information_schema.columns where table_name = 'clients' and column_name like 'opted_out%'`;
      expect(flags).toHaveLength(0);
    } finally {
      await after.end();
    }
  });
});
