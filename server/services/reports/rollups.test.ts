import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { settle as settleHandler } from '@/server/testing/assignment';
import { createClient, createConversation, createLocation, createMessage, createTenant } from '@/server/testing/factories';
import { businessesToRecount, backfillReports } from './backfill';
import { reportsHandler } from './handler';
import { reportScope, responseTimesReport, volumeReport } from './read';
import { recountBusinessReports } from './recount';
import { countRowsInto, deleteRollupRows, openRollups, setRollupState } from './rollups';

/**
 * What the rollups promise beyond the property test (reports.test.ts): a count goes on from the open
 * cycle's last message, a message is counted in volumes when it is sent and not when it is canceled,
 * and a zone that changes sends reports to the rows until the backfill has counted the rollups again
 * (docs/api.md#reports, docs/architecture.md#reports).
 */

const settle = () => settleHandler(reportsHandler);
const MIN = 60_000;
const T0 = Date.parse('2026-06-01T14:00:00Z');
const range = { from: new Date('2026-05-01T00:00:00Z'), to: new Date('2026-07-01T00:00:00Z') };

async function conversation(location?: number) {
  const t = await createTenant();
  const client = await createClient(t.business.id);
  const conv = await createConversation(t.business.id, client.id, { locationId: location ?? null });
  return { t, conv, businessId: t.business.id };
}

type Conv = Awaited<ReturnType<typeof conversation>>['conv'];

/** A message as the product writes one, with its event. */
async function message(conv: Conv, values: NonNullable<Parameters<typeof createMessage>[1]>) {
  const m = await createMessage(conv, { createdAt: values.sentAt, ...values });
  await db.execute(sql`
    insert into events (business_id, type, conversation_id, message_id, client_id, actor_type, actor_staff_id, data, occurred_at)
    values (${conv.businessId}, ${m.direction === 'inbound' ? 'message.received' : 'message.created'}, ${conv.id}, ${m.id}, ${conv.clientId},
      ${m.direction === 'inbound' ? 'client' : m.staffId ? 'staff' : 'system'}, ${m.staffId},
      ${JSON.stringify({ message_id: m.id, conversation_id: conv.id, client_id: conv.clientId, channel: m.channel, message_type: m.messageType, direction: m.direction, status: m.status, send_at: null })}::jsonb,
      ${m.sentAt.toISOString()}::timestamptz)`);
  return m;
}

const client = (conv: Conv, at: number) =>
  message(conv, { direction: 'inbound', senderType: 'client', status: 'received', sentAt: new Date(at) });
const reply = (conv: Conv, staffId: number, at: number) => message(conv, { staffId, status: 'delivered', sentAt: new Date(at) });

describe('reports rollups', () => {
  it('a later message goes on from the open cycle: what came before it is not read again', async () => {
    const { t, conv, businessId } = await conversation();
    await client(conv, T0);
    const first = await reply(conv, t.owner.id, T0 + 5 * MIN);
    await client(conv, T0 + 30 * MIN);
    await settle();
    const cycle = () =>
      db.execute<{
        replies: number;
        client_messages: number;
        first_reply_staff_id: number | null;
        waiting_message_id: number | null;
      }>(
        sql`select replies, client_messages, first_reply_staff_id, waiting_message_id from report_cycles where conversation_id = ${conv.id}`,
      );
    expect(await cycle()).toEqual([
      expect.objectContaining({ replies: 1, client_messages: 2, first_reply_staff_id: t.owner.id }),
    ]);
    // Changed behind the handler's back (no event): a count from the cycle's start would see it.
    await db.execute(sql`update messages set staff_id = null where id = ${first.id}`);
    await reply(conv, t.owner.id, T0 + 40 * MIN);
    await settle();
    expect(await cycle()).toEqual([
      expect.objectContaining({ replies: 2, client_messages: 2, first_reply_staff_id: t.owner.id, waiting_message_id: null }),
    ]);
    const times = (await responseTimesReport(businessId, range)).total.reply;
    expect(times).toMatchObject({ count: 2, median_seconds: 450, p90_seconds: 570 });
    // The backfill reads everything again.
    await backfillReports({ businessIds: [businessId] });
    expect(await cycle()).toEqual([expect.objectContaining({ replies: 2, first_reply_staff_id: null })]);
  });

  it('volumes count a message once it is sent, not while scheduled nor once canceled, and a campaign’s text', async () => {
    const { conv, businessId } = await conversation();
    const messages = async () => (await volumeReport(businessId, range)).total.messages;
    await client(conv, T0);
    const later = await message(conv, { status: 'scheduled', sendAt: new Date(T0 + 60 * MIN), sentAt: new Date(T0) });
    const queued = await message(conv, { status: 'queued', sentAt: new Date(T0 + 2 * MIN) });
    await message(conv, { senderType: 'system', status: 'sent', sentAt: new Date(T0 + 3 * MIN) }); // a campaign's
    await settle();
    expect(await messages()).toMatchObject({ sms_in: 1, sms_out: 2 });
    // The scheduled text goes (into `sending`: no event), then is sent (an event from `sending`).
    await db.execute(
      sql`update messages set status = 'sending', sent_at = ${new Date(T0 + 61 * MIN).toISOString()} where id = ${later.id}`,
    );
    await db.execute(sql`update messages set status = 'sent' where id = ${later.id}`);
    // The queued one is canceled before it goes.
    await db.execute(sql`update messages set status = 'canceled' where id = ${queued.id}`);
    await settle();
    expect(await messages()).toMatchObject({ sms_in: 1, sms_out: 2 });
    const [counted] = await db.execute<{ ids: number[] }>(
      sql`select array_agg(message_id order by message_id) as ids from report_messages where conversation_id = ${conv.id}`,
    );
    expect(counted!.ids).not.toContain(queued.id);
    expect(counted!.ids).toContain(later.id);
    // Counted at the moment it went.
    const days = await volumeReport(businessId, { ...range, group_by: 'day' });
    expect(days.groups.map((g) => [g.key, g.messages.sms_out])).toEqual([['2026-06-01', 2]]);
  });

  it('a zone that changes sends reports to the rows until the backfill counts the rollups again', async () => {
    const t = await createTenant();
    const businessId = t.business.id;
    const london = await createLocation(businessId, { timezone: 'Europe/London' });
    const c1 = await createConversation(businessId, (await createClient(businessId)).id, { locationId: london.id });
    const c2 = await createConversation(businessId, (await createClient(businessId)).id);
    // 23:30 in New York, 04:30 the next day in London.
    const late = Date.parse('2026-06-02T03:30:00Z');
    for (const c of [c1, c2]) {
      await client(c, late);
      await reply(c, t.owner.id, late + 10 * MIN);
    }
    await settle();
    const days = async (q: { location_id?: number } = {}) =>
      (await responseTimesReport(businessId, { ...range, ...q, group_by: 'day' })).groups.map((g) => [
        g.key,
        g.first_response.count,
      ]);
    expect((await reportScope(businessId, range)).rollups).toBe(true);
    expect(await days()).toEqual([['2026-06-01', 2]]);
    // The London location's own days, from the rollups counted in its zone.
    expect(await reportScope(businessId, { ...range, location_id: london.id })).toEqual({
      timeZone: 'Europe/London',
      local: true,
      rollups: true,
    });
    expect(await days({ location_id: london.id })).toEqual([['2026-06-02', 1]]);

    await db.execute(sql`update businesses set timezone = 'Europe/London' where id = ${businessId}`);
    // Read before any writer saw the change: the rollups are in another zone, so the rows answer.
    expect((await reportScope(businessId, range)).rollups).toBe(false);
    expect(await days()).toEqual([['2026-06-02', 2]]);
    // The backfill picks it though no writer has opened its rollups since (a quiet business)…
    expect(await businessesToRecount()).toContain(businessId);
    // …and after one has (marked them unready).
    await client(c2, late + 60 * MIN);
    await settle();
    expect(await businessesToRecount()).toContain(businessId);
    expect((await reportScope(businessId, range)).rollups).toBe(false);
    await backfillReports({ businessIds: [businessId] });
    expect(await businessesToRecount()).not.toContain(businessId);
    expect((await reportScope(businessId, range)).rollups).toBe(true);
    expect(await days()).toEqual([['2026-06-02', 2]]);
    // London is the business's zone now: no own rollups for it.
    expect((await reportScope(businessId, { ...range, location_id: london.id })).local).toBe(false);
    const [own] = await db.execute<{ n: number }>(
      sql`select count(*)::int as n from report_histograms where business_id = ${businessId} and local`,
    );
    expect(own!.n).toBe(0);
  });

  it('while the backfill counts them again, the handler adds only what is dated before where it got', async () => {
    const { t, conv, businessId } = await conversation();
    const day2 = Date.parse('2026-06-03T04:00:00Z'); // midnight in New York
    await client(conv, T0);
    await reply(conv, t.owner.id, T0 + 5 * MIN);
    await client(conv, day2 + 60 * MIN);
    await settle();
    const rollups = () =>
      db.execute(sql`
        select local, dims, week, period, figure, business, location_id, staff_id, channel, bucket, n from report_histograms
        where business_id = ${businessId} and n <> 0
        union all
        select local, -1, false, day, 'day', false, location_id, staff_id, channel, opened * 1000 + resolved * 100 + messages_in * 10 + messages_out, 0
        from report_day_counts where business_id = ${businessId} and (opened, resolved, messages_in, messages_out) <> (0, 0, 0, 0)
        order by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10`);
    // The backfill, emptied and half way: the rows before day 2 counted.
    const until = new Date(day2).toISOString();
    await db.transaction(async (tx) => {
      const r = await openRollups(businessId, tx);
      while ((await deleteRollupRows(businessId, 1000, tx)) > 0);
      const state = await setRollupState(businessId, r.zones, { ready: false, builtUntil: until }, tx);
      await countRowsInto(businessId, state, '-infinity', until, tx);
    });
    // The handler meanwhile: a reply to the first day's wait (dated before), one to the second's (after).
    await client(conv, T0 + 20 * MIN);
    await reply(conv, t.owner.id, T0 + 50 * MIN);
    await reply(conv, t.owner.id, day2 + 90 * MIN);
    await settle();
    expect((await reportScope(businessId, range)).rollups).toBe(false);
    // The backfill's last stretch, from the rows as the handler left them.
    await db.transaction(async (tx) => {
      const r = await openRollups(businessId, tx);
      expect(r.builtUntil === null ? null : Date.parse(r.builtUntil)).toBe(day2);
      await countRowsInto(businessId, r, until, 'infinity', tx);
      await setRollupState(businessId, r.zones, { ready: true, builtUntil: null }, tx);
    });
    const kept = await rollups();
    expect(kept.length).toBeGreaterThan(0);
    // As a count from nothing finds them.
    await recountBusinessReports(businessId);
    expect(await rollups()).toEqual(kept);
    expect((await responseTimesReport(businessId, range)).total.reply.count).toBe(3);
  });
});
