import { afterAll, describe, expect, inject, it } from 'vitest';
import { stageBeforeMigration, type MigrationStage } from './migration-stage';

/**
 * Migration 0023: the opt-outs in place become the first records of their addresses' history, and
 * consent records dated after they were made are dated when they were made. A database is migrated
 * up to the migration before it (a copy of the migrations folder whose journal stops there), given
 * such rows, then migrated to the end.
 */
let stage: MigrationStage | undefined;
afterAll(() => stage?.drop());

describe('migration 0023 (opt-out history, consent dates)', () => {
  it('records every opt-out in place as an opt-out, dates future consent records at their creation, then refuses them', async () => {
    stage = await stageBeforeMigration(inject('adminDatabaseUrl'), 23);

    const { sql } = stage;
    let business = 0;
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
    const after = await stage.migrateToEnd();
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
  });
});
