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
 * Migration 0023: the opt-outs in place become the first records of their addresses' history, and
 * consent records dated after they were made are dated when they were made. A database is migrated
 * up to the migration before it (a copy of the migrations folder whose journal stops there), given
 * such rows, then migrated to the end.
 */
const migrations = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
const admin = createSql(inject('adminDatabaseUrl'), { max: 1 });
const name = `msg_history_${randomBytes(4).toString('hex')}`;
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

describe('migration 0023 (opt-out history, consent dates)', () => {
  it('records every opt-out in place as an opt-out, dates future consent records at their creation, then refuses them', async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'migrations-0022-'));
    await cp(migrations, folder, { recursive: true });
    const journalPath = path.join(folder, 'meta', '_journal.json');
    const journal = JSON.parse(await readFile(journalPath, 'utf8')) as { entries: { idx: number }[] };
    journal.entries = journal.entries.filter((e) => e.idx < 23);
    await writeFile(journalPath, JSON.stringify(journal));

    await admin.unsafe(`create database "${name}"`);
    const sql = createSql(url, { max: 1 });
    let business = 0;
    try {
      await migrate(drizzle(sql), { migrationsFolder: folder });
      const [b] = await sql<
        { id: number }[]
      >`insert into businesses (name, timezone) values ('A', 'America/New_York') returning id`;
      business = b!.id;
      const [c] = await sql<{ id: number }[]>`
        insert into clients (business_id, name, phone_number) values (${business}, 'Pat', '+14155550001') returning id`;
      await sql`
        insert into opt_outs (business_id, channel, address, source, created_at) values
          (${business}, 'sms', '+14155550001', 'keyword', '2026-10-01T10:00:00Z'),
          (${business}, 'email', 'pat@example.test', 'provider_error', '2026-10-02T10:00:00Z')`;
      await sql`
        insert into consents (business_id, client_id, channel, purpose, status, source, recorded_at, created_at) values
          (${business}, ${c!.id}, 'sms', 'marketing', 'given', 'api', '2026-10-05T10:04:00Z', '2026-10-05T10:00:00Z'),
          (${business}, ${c!.id}, 'sms', 'marketing', 'withdrawn', 'keyword', '2026-10-05T10:02:00Z', '2026-10-05T10:02:00Z')`;
      await sql.end();
      await migrateDatabase(url);
    } finally {
      await sql.end().catch(() => {});
    }

    const after = createSql(url, { max: 1 });
    try {
      const events = await after`
        select channel, address, action, source, staff_id, created_at from opt_out_events where business_id = ${business} order by id`;
      expect(events.map((e) => ({ ...e }))).toEqual([
        {
          channel: 'sms',
          address: '+14155550001',
          action: 'opt_out',
          source: 'keyword',
          staff_id: null,
          created_at: new Date('2026-10-01T10:00:00Z'),
        },
        {
          channel: 'email',
          address: 'pat@example.test',
          action: 'opt_out',
          source: 'provider_error',
          staff_id: null,
          created_at: new Date('2026-10-02T10:00:00Z'),
        },
      ]);
      // The withdrawal made after the record dated ahead is now the current consent.
      const [current] = await after`
        select status, recorded_at from consents where business_id = ${business} order by recorded_at desc, id desc limit 1`;
      expect({ ...current }).toEqual({ status: 'withdrawn', recorded_at: new Date('2026-10-05T10:02:00Z') });
      await expect(after`
        insert into consents (business_id, client_id, channel, purpose, status, source, recorded_at)
        select business_id, client_id, 'sms', 'marketing', 'given', 'api', now() + interval '1 minute' from consents limit 1`).rejects.toMatchObject(
        { constraint_name: 'consents_recorded_at_check' },
      );
    } finally {
      await after.end();
    }
  });
});
