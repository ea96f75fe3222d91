import { sql, type SQL } from 'drizzle-orm';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { db } from '@/server/db/client';
import { databaseHasData, seedDemoData, type SeedSummary } from '@/server/demo/seed';
import { logger } from '@/server/logger';
import { resolveApiKey } from '@/server/services/auth';
import { requeueOrphanedSends } from '@/server/services/recovery';
import { sendJobsFor } from '@/server/testing/send-jobs';

// The test setup gives this file its own migrated, empty database (DATABASE_URL).

const E164 = /^\+[1-9]\d{7,14}$/;

async function rows<T>(query: SQL): Promise<T[]> {
  return (await db.execute(query)) as unknown as T[];
}
async function count(query: SQL): Promise<number> {
  const [row] = await rows<{ n: number }>(query);
  return Number(row!.n);
}

let summary: SeedSummary;
let seedMs = 0;

beforeAll(async () => {
  expect(await databaseHasData(db)).toBe(false);
  const started = performance.now();
  summary = await seedDemoData(db);
  seedMs = performance.now() - started;
}, 60_000);

describe('seedDemoData', () => {
  it('creates the demo world, quickly', async () => {
    expect(seedMs).toBeLessThan(10_000);
    expect(await count(sql`select count(*) as n from businesses`)).toBe(2);
    expect(await count(sql`select count(*) as n from locations`)).toBe(3);
    expect(await count(sql`select count(*) as n from staff`)).toBe(8);
    expect(await count(sql`select count(*) as n from clients`)).toBe(300);
    const messages = await count(sql`select count(*) as n from messages`);
    expect(messages).toBeGreaterThanOrEqual(1800);
    expect(messages).toBeLessThanOrEqual(2300);
    expect(summary).toMatchObject({ locations: 3, staff: 8, clients: 300, messages });
    expect(summary.businesses.map((b) => b.name)).toEqual(['Bloom Hair Studio', 'Lumen Skin Clinic']);

    // Most clients have a conversation; every conversation has messages.
    const conversations = await count(sql`select count(*) as n from conversations`);
    expect(conversations).toBeGreaterThanOrEqual(220);
    expect(conversations).toBeLessThan(300);
    expect(
      await count(
        sql`select count(*) as n from conversations c where not exists (select 1 from messages m where m.conversation_id = c.id)`,
      ),
    ).toBe(0);

    // Every channel and message type is represented.
    const kinds = await rows<{ message_type: string; channel: string | null }>(
      sql`select distinct message_type, channel from messages order by 1`,
    );
    expect(kinds).toEqual(
      expect.arrayContaining([
        { message_type: 'CALL', channel: 'voice' },
        { message_type: 'EMAIL', channel: 'email' },
        { message_type: 'NOTE', channel: null },
        { message_type: 'TEXT', channel: 'sms' },
      ]),
    );
  });

  it('gives each business a default SMS number, a default email sender and a working API key', async () => {
    const senders = await rows<{ id: number; from_email: string; sms: number; emails: number }>(sql`
      select b.id, b.from_email,
             (select count(*) from business_sms_numbers n where n.business_id = b.id and n.is_default)::int as sms,
             (select count(*) from business_email_senders e where e.business_id = b.id and e.is_default and e.email = b.from_email)::int as emails
      from businesses b order by b.id`);
    expect(senders).toHaveLength(2);
    for (const s of senders) {
      expect(s.sms).toBe(1);
      expect(s.emails).toBe(1);
    }
    for (const b of summary.businesses) {
      expect(b.apiKey).toMatch(/^bk_/);
      const caller = await resolveApiKey(b.apiKey);
      expect(caller).toMatchObject({ kind: 'business_key', businessId: b.id });
    }
  });

  it('keeps every conversation’s denormalised fields equal to a fresh aggregation over its messages', async () => {
    const mismatches = await rows<{ id: number }>(sql`
      select c.id
      from conversations c
      cross join lateral (
        select count(*) filter (where m.direction = 'inbound' and m.message_type <> 'NOTE' and not m.is_read)::int as unread,
               count(*) filter (where m.flagged)::int as flagged,
               max(m.sent_at) as last_at,
               max(m.id) filter (where m.direction = 'inbound' and m.is_read) as last_read
        from messages m where m.conversation_id = c.id
      ) a
      cross join lateral (
        select m.id, m.content from messages m where m.conversation_id = c.id order by m.sent_at desc, m.id desc limit 1
      ) l
      left join lateral (
        select m.channel from messages m
        where m.conversation_id = c.id and m.message_type <> 'NOTE'
        order by m.sent_at desc, m.id desc limit 1
      ) ln on true
      where c.unread_count <> a.unread
         or c.flagged_count <> a.flagged
         or c.last_message_id is distinct from l.id
         or c.last_message_content is distinct from l.content
         or c.last_activity_at <> a.last_at
         or c.last_channel is distinct from ln.channel
         or c.last_read_message_id is distinct from a.last_read`);
    expect(mismatches).toEqual([]);

    // The inbox has something to show: unread and flagged conversations.
    expect(await count(sql`select count(*) as n from conversations where unread_count > 0`)).toBeGreaterThan(0);
    expect(await count(sql`select count(*) as n from conversations where flagged_count > 0`)).toBeGreaterThan(0);
  });

  it('never counts notes as unread, and keeps notes channel-less and written by staff', async () => {
    expect(await count(sql`select count(*) as n from messages where message_type = 'NOTE'`)).toBeGreaterThan(0);
    const badNotes = await count(sql`
      select count(*) as n from messages
      where message_type = 'NOTE' and (channel is not null or sender_type <> 'staff' or staff_id is null or direction <> 'outbound' or not is_read)`);
    expect(badNotes).toBe(0);
    // The counts above exclude notes by definition; a conversation's unread count never exceeds its
    // inbound non-note messages.
    const over = await count(sql`
      select count(*) as n from conversations c
      where c.unread_count > (select count(*) from messages m
                              where m.conversation_id = c.id and m.direction = 'inbound' and m.message_type <> 'NOTE')`);
    expect(over).toBe(0);
  });

  it('records each opt-out in the history, as suppression.ts does', async () => {
    const optedOut = await count(sql`select count(*) as n from opt_outs`);
    expect(optedOut).toBeGreaterThan(0);
    expect(
      await count(sql`select count(*) as n from opt_outs o join opt_out_events e
        on e.business_id = o.business_id and e.channel = o.channel and e.address = o.address
        and e.action = 'opt_out' and e.source = o.source`),
    ).toBe(optedOut);
    expect(await count(sql`select count(*) as n from opt_out_events`)).toBe(optedOut);
  });

  it('stores every phone number in E.164', async () => {
    const phones = await rows<{ source: string; phone: string }>(sql`
      select 'client' as source, phone_number as phone from clients where phone_number is not null
      union all select 'staff', phone_number from staff where phone_number is not null
      union all select 'location', phone_number from locations where phone_number is not null
      union all select 'business', phone_number from business_sms_numbers
      union all select 'message', from_address from messages where channel in ('sms', 'voice') and from_address is not null
      union all select 'message', to_address from messages where channel in ('sms', 'voice') and to_address is not null`);
    expect(phones.length).toBeGreaterThan(2000);
    expect(phones.filter((p) => !E164.test(p.phone))).toEqual([]);
    // About 90% of clients have a phone number, about 80% an email address.
    const withPhone = await count(sql`select count(*) as n from clients where phone_number is not null`);
    const withEmail = await count(sql`select count(*) as n from clients where email is not null`);
    expect(withPhone).toBeGreaterThan(240);
    expect(withEmail).toBeGreaterThan(210);
  });

  it('gives each business exactly one owner, and keeps people and conversations inside their business', async () => {
    const roles = await rows<{ business_id: number; owners: number; managers: number }>(sql`
      select business_id,
             count(*) filter (where role = 'owner')::int as owners,
             count(*) filter (where role = 'manager')::int as managers
      from staff group by business_id order by business_id`);
    expect(roles).toHaveLength(2);
    for (const r of roles) {
      expect(r.owners).toBe(1);
      expect(r.managers).toBeGreaterThanOrEqual(1);
    }
    for (const b of summary.businesses) {
      const [owner] = await rows<{ role: string; business_id: number }>(
        sql`select role, business_id from staff where id = ${b.ownerStaffId}`,
      );
      expect(owner).toEqual({ role: 'owner', business_id: b.id });
    }

    const crossTenant = await count(sql`
      select count(*) as n from conversations c
      join clients cl on cl.id = c.client_id
      left join staff a on a.id = c.assigned_staff_id
      left join staff r on r.id = c.resolved_by_staff_id
      where cl.business_id <> c.business_id
         or c.location_id is distinct from cl.location_id
         or (a.id is not null and a.business_id <> c.business_id)
         or (r.id is not null and r.business_id <> c.business_id)`);
    expect(crossTenant).toBe(0);
    const crossMessages = await count(sql`
      select count(*) as n from messages m
      join conversations c on c.id = m.conversation_id
      left join staff s on s.id = m.staff_id
      where m.business_id <> c.business_id or m.client_id <> c.client_id
         or (s.id is not null and s.business_id <> m.business_id)`);
    expect(crossMessages).toBe(0);

    // Roughly half the conversations are assigned; resolved ones say who resolved them; snoozes are in the future.
    const assigned = await count(sql`select count(*) as n from conversations where assigned_staff_id is not null`);
    const total = await count(sql`select count(*) as n from conversations`);
    expect(assigned / total).toBeGreaterThan(0.3);
    expect(assigned / total).toBeLessThan(0.7);
    expect(
      await count(sql`select count(*) as n from conversations where status = 'resolved' and resolved_by_staff_id is null`),
    ).toBe(0);
    expect(
      await count(
        sql`select count(*) as n from conversations where status = 'snoozed' and (snoozed_until is null or snoozed_until <= now())`,
      ),
    ).toBe(0);
  });

  it('writes messages that look like the providers wrote them, all within the last week', async () => {
    const dupes = await count(sql`
      select count(*) as n from (
        select provider, provider_message_id from messages where provider_message_id is not null
        group by 1, 2 having count(*) > 1) d`);
    expect(dupes).toBe(0);
    expect(
      await count(
        sql`select count(*) as n from messages where message_type = 'TEXT' and provider_message_id !~ '^SM[0-9a-f]{32}$'`,
      ),
    ).toBe(0);
    expect(
      await count(
        sql`select count(*) as n from messages where message_type = 'CALL' and provider_message_id !~ '^CA[0-9a-f]{32}$'`,
      ),
    ).toBe(0);
    expect(
      await count(sql`select count(*) as n from messages where message_type = 'EMAIL' and (subject is null or subject = '')`),
    ).toBe(0);
    expect(
      await count(
        sql`select count(*) as n from messages where message_type = 'TEXT' and (segments is null or segments < 1 or encoding is null)`,
      ),
    ).toBe(0);
    expect(
      await count(
        sql`select count(*) as n from messages where direction = 'inbound' and (status <> 'received' or sender_type <> 'client') and message_type <> 'CALL'`,
      ),
    ).toBe(0);
    // Failures carry the provider's error; successes do not.
    expect(
      await count(
        sql`select count(*) as n from messages where status in ('failed', 'undelivered', 'bounced') and error_code is null`,
      ),
    ).toBe(0);
    expect(
      await count(
        sql`select count(*) as n from messages where status not in ('failed', 'undelivered', 'bounced') and error_code is not null`,
      ),
    ).toBe(0);
    expect(await count(sql`select count(*) as n from messages where status in ('failed', 'undelivered')`)).toBeGreaterThan(0);
    // Missed calls and voicemails.
    expect(
      await count(
        sql`select count(*) as n from messages where message_type = 'CALL' and call_outcome in ('missed', 'voicemail')`,
      ),
    ).toBeGreaterThan(0);
    expect(
      await count(sql`select count(*) as n from messages where message_type = 'CALL' and recording_url is not null`),
    ).toBeGreaterThan(0);
    // Delivered is the most common outbound SMS status.
    const [top] = await rows<{ status: string }>(sql`
      select status from messages where message_type = 'TEXT' and direction = 'outbound'
      group by status order by count(*) desc limit 1`);
    expect(top!.status).toBe('delivered');

    const outside = await count(
      sql`select count(*) as n from messages where sent_at > now() or sent_at < now() - interval '7 days 1 hour'`,
    );
    expect(outside).toBe(0);
  });

  it('leaves no message in flight without a send job: the worker’s recovery finds nothing to re-enqueue', async () => {
    const inFlight = await rows<{ id: number }>(sql`
      select id from messages where status in ('queued', 'sending') and direction = 'outbound' order by id`);
    // The demo shows a few texts sent a moment ago, still queued; each has its job.
    expect(inFlight.length).toBeGreaterThan(0);
    const ids = inFlight.map((m) => Number(m.id));
    const jobs = await sendJobsFor(ids);
    expect([...new Set(jobs.map((j) => Number(j.message_id)))]).toEqual(ids);
    expect(jobs.every((j) => j.state === 'created')).toBe(true);
    // However old the threshold makes them, none is an orphan (0 s: every in-flight message is looked at).
    const warn = vi.spyOn(logger, 'warn');
    expect(await requeueOrphanedSends(logger, 0)).toBe(0);
    expect(warn).not.toHaveBeenCalled();
    warn.mockRestore();

    // The check itself still works: once those jobs are gone, the same messages are found and re-enqueued.
    await db.execute(sql`delete from pgboss.job where id = any(${sql.param(jobs.map((j) => j.id))}::uuid[])`);
    expect(await requeueOrphanedSends(logger, 0)).toBe(ids.length);
    expect(await requeueOrphanedSends(logger, 0)).toBe(0);
  });

  it('refuses to run a second time, and changes nothing', async () => {
    expect(await databaseHasData(db)).toBe(true);
    const before = await count(sql`select count(*) as n from messages`);
    await expect(seedDemoData(db)).rejects.toThrow('database already has data');
    expect(await count(sql`select count(*) as n from messages`)).toBe(before);
    expect(await count(sql`select count(*) as n from businesses`)).toBe(2);
  });
});
