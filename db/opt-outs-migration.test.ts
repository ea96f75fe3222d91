import { afterAll, describe, expect, inject, it } from 'vitest';
import { stageBeforeMigration, type MigrationStage } from './migration-stage';

/**
 * Migration 0010 carries the old per-client opt-out flags into opt_outs by address: a database is
 * migrated up to 0009 (a copy of the migrations folder whose journal stops there), given flagged
 * clients, then migrated to the end.
 */
let stage: MigrationStage | undefined;
afterAll(() => stage?.drop());

describe('migration 0010 (opt_outs)', () => {
  it('turns every opted-out client flag into an opt-out of its phone number or lower-cased email, then drops the flags', async () => {
    stage = await stageBeforeMigration(inject('adminDatabaseUrl'), 10);
    const { sql } = stage;
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

    const after = await stage.migrateToEnd();
    const rows = await after<{ business_id: number; channel: string; address: string; source: string; message_id: null }[]>`
      select business_id, channel, address, source, message_id from opt_outs order by business_id, channel, address`;
    expect(rows.map((r) => ({ ...r }))).toEqual([
      { business_id: A, channel: 'email', address: 'pat@example.test', source: 'migrated', message_id: null },
      { business_id: A, channel: 'email', address: 'sam@example.test', source: 'migrated', message_id: null },
      { business_id: A, channel: 'sms', address: '+14155550001', source: 'migrated', message_id: null },
      { business_id: B, channel: 'email', address: 'pat@example.test', source: 'migrated', message_id: null },
    ]);
    const flags = await after`
      select 1 from information_schema.columns where table_name = 'clients' and column_name like 'opted_out%'`;
    expect(flags).toHaveLength(0);
  });
});
