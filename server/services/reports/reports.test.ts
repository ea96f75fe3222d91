import fc from 'fast-check';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { EVENT_HANDLERS } from '@/server/services/events/handlers';
import { setOpeningHours } from '@/server/services/opening-hours';
import { openingClock, WEEKDAYS, type Schedule, type WeeklyHours } from '@/server/shared/opening-hours';
import {
  createClient,
  createConversation,
  createLocation,
  createMessage,
  createStaff,
  createTenant,
} from '@/server/testing/factories';
import { settle as settleHandler } from '@/server/testing/assignment';
import { reportsHandler } from './handler';
import { GROUP_BYS } from '@/server/shared/reports';
import { callsReport, reportScope, responseTimesReport, volumeReport, type ReportQuery, type Stats } from './read';
import { recountBusinessReports, recountConversations } from './recount';

/**
 * Reports, correct by proof (docs/api.md#reports): random conversation histories — reopens, notes,
 * automatic answers, scheduled messages, after-hours arrivals, several staff, daylight-saving
 * changes — are written as messages and events, the real handlers (activity, then reports) read the
 * log, and every durable row and every report figure is compared with a brute-force recount of the
 * same history: cycles found by scanning, business seconds counted minute by minute on the clock.
 */

const MIN = 60_000;

/** The activity handler, then the reports handler behind it, caught up with the log. */
const settle = () => settleHandler(reportsHandler);

const weekly = (days: Partial<Record<(typeof WEEKDAYS)[number], [number, number][]>>): WeeklyHours =>
  Object.fromEntries(WEEKDAYS.map((d) => [d, (days[d] ?? []).map(([start, end]) => ({ start, end }))])) as WeeklyHours;
const NINE_TO_FIVE: Schedule = {
  weekly: weekly({
    monday: [[540, 1020]],
    tuesday: [[540, 1020]],
    wednesday: [[540, 1020]],
    thursday: [[540, 1020]],
    friday: [[540, 1020]],
  }),
  exceptions: [],
};
const LONDON_HOURS: Schedule = {
  weekly: weekly({
    monday: [
      [480, 720],
      [780, 1200],
    ],
    saturday: [[60, 180]],
    sunday: [[1320, 1560]],
    wednesday: [[0, 1440]],
  }),
  exceptions: [{ date: '2026-03-30', name: 'Closed', intervals: [] }],
};
const BUSINESS_HOURS: Schedule = {
  weekly: weekly({ monday: [[480, 1200]], tuesday: [[480, 1200]], saturday: [[600, 960]], sunday: [[90, 150]] }),
  exceptions: [],
};

type Step =
  | { kind: 'client'; channel: 'sms' | 'email' }
  | { kind: 'reply'; channel: 'sms' | 'email'; staff: number }
  | { kind: 'system' }
  | { kind: 'note'; staff: number }
  | { kind: 'scheduled'; staff: number }
  | { kind: 'resolve'; staff: number | null }
  | { kind: 'reopen'; staff: number }
  | { kind: 'missed_call'; voicemail: boolean }
  | { kind: 'call_out'; staff: number };

const staffIndex = fc.integer({ min: 0, max: 2 });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('client' as const), channel: fc.constantFrom('sms' as const, 'email' as const) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('reply' as const),
      channel: fc.constantFrom('sms' as const, 'email' as const),
      staff: staffIndex,
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'system' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('note' as const), staff: staffIndex }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('scheduled' as const), staff: staffIndex }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('resolve' as const), staff: fc.option(staffIndex, { nil: null }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reopen' as const), staff: staffIndex }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('missed_call' as const), voicemail: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('call_out' as const), staff: staffIndex }) },
);
// Around the year's daylight-saving changes in New York (8 March, 1 November) and London (29 March, 25 October).
const STARTS = ['2026-03-06T20:00:00Z', '2026-03-27T22:00:00Z', '2026-10-23T15:00:00Z', '2026-10-30T12:00:00Z'].map(Date.parse);
const conversationArb = fc.record({
  location: fc.integer({ min: 0, max: 2 }), // 0: none (the business's hours)
  start: fc.constantFrom(...STARTS),
  steps: fc.array(
    fc.record({
      step: stepArb,
      // Minutes after the previous step: often minutes, sometimes across a night or a weekend; 0 ties.
      gap: fc.oneof(fc.integer({ min: 0, max: 90 }), fc.integer({ min: 0, max: 3 * 24 * 60 })),
      // The handlers read the log here: the next steps are counted on top of what is already kept.
      settle: fc.boolean(),
    }),
    { minLength: 1, maxLength: 14 },
  ),
});

type Written = {
  at: number;
  step: Step;
  messageId: number | null;
  order: number;
  staffId: number | null;
  location: number | null;
};

/** Minute-by-minute business seconds (every time here is on a whole minute). */
function bruteBusiness(schedule: { isOpen(at: Date): boolean }, from: number, to: number): number {
  let s = 0;
  for (let t = from; t < to; t += MIN) if (schedule.isOpen(new Date(t))) s += 60;
  return s;
}

/** The median and p90 as percentile_cont reads them. */
function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const v = [...values].sort((a, b) => a - b);
  const r = p * (v.length - 1);
  const lo = Math.floor(r);
  const hi = Math.ceil(r);
  return v[lo]! + (r - lo) * (v[hi]! - v[lo]!);
}
const statsOf = (pairs: [number, number][]): Stats => ({
  count: pairs.length,
  median_seconds: percentile(
    pairs.map((p) => p[0]),
    0.5,
  ),
  p90_seconds: percentile(
    pairs.map((p) => p[0]),
    0.9,
  ),
  median_business_seconds: percentile(
    pairs.map((p) => p[1]),
    0.5,
  ),
  p90_business_seconds: percentile(
    pairs.map((p) => p[1]),
    0.9,
  ),
});

type BruteCycle = {
  conversationId: number;
  location: number | null;
  channel: 'sms' | 'email';
  start: number;
  startMessageId: number;
  firstReply: { at: number; staff: number | null; seconds: number; business: number } | null;
  resolved: { at: number; staff: number | null; seconds: number; business: number } | null;
  replies: { waiting: number; channel: 'sms' | 'email'; at: number; staff: number | null; seconds: number; business: number }[];
};

/** The definitions, recounted the slow way: a client message starts a cycle when a resolution lies between it and the client's previous message. */
function bruteCycles(conversationId: number, history: Written[], isOpen: { isOpen(at: Date): boolean }): BruteCycle[] {
  // Equal times: messages first, then by id; a resolution after the messages of its millisecond.
  const ordered = [...history].sort(
    (a, b) => a.at - b.at || (a.step.kind === 'resolve' ? 1 : 0) - (b.step.kind === 'resolve' ? 1 : 0) || a.order - b.order,
  );
  const isReply = (w: Written) => w.step.kind === 'reply';
  const cycles: BruteCycle[] = [];
  // Where the last cycle ended (its resolution's index; -1 while it is open); none yet: -Infinity.
  let lastEnd = -Infinity;
  for (let i = 0; i < ordered.length; i++) {
    const w = ordered[i]!;
    if (w.step.kind !== 'client') continue;
    // A cycle is open unless the last one ended before this message.
    if (cycles.length > 0 && (lastEnd === -1 || lastEnd > i)) continue;
    // Its end: the first resolution after it.
    const endIndex = ordered.findIndex((x, k) => k > i && x.step.kind === 'resolve');
    const inside = ordered.slice(i, endIndex < 0 ? ordered.length : endIndex);
    const replies: BruteCycle['replies'] = [];
    let waiting: Written | null = null;
    for (const x of inside) {
      if (x.step.kind === 'client') waiting ??= x;
      else if (isReply(x) && waiting) {
        replies.push({
          waiting: waiting.at,
          channel: (waiting.step as { channel: 'sms' | 'email' }).channel,
          at: x.at,
          staff: x.staffId,
          seconds: (x.at - waiting.at) / 1000,
          business: bruteBusiness(isOpen, waiting.at, x.at),
        });
        waiting = null;
      }
    }
    const end = endIndex < 0 ? null : ordered[endIndex]!;
    lastEnd = endIndex;
    cycles.push({
      conversationId,
      location: w.location,
      channel: (w.step as { channel: 'sms' | 'email' }).channel,
      start: w.at,
      startMessageId: w.messageId!,
      firstReply: replies[0]
        ? { at: replies[0].at, staff: replies[0].staff, seconds: replies[0].seconds, business: replies[0].business }
        : null,
      resolved: end
        ? { at: end.at, staff: end.staffId, seconds: (end.at - w.at) / 1000, business: bruteBusiness(isOpen, w.at, end.at) }
        : null,
      replies,
    });
  }
  return cycles;
}

/** Missed calls, the slow way: each is answered by the first staff call or reply after it. */
function bruteCalls(history: Written[], isOpen: { isOpen(at: Date): boolean }) {
  const ordered = [...history].sort((a, b) => a.at - b.at || a.order - b.order);
  return ordered
    .filter((w) => w.step.kind === 'missed_call')
    .map((w) => {
      const answer = ordered.find(
        (x) => (x.step.kind === 'reply' || x.step.kind === 'call_out') && (x.at > w.at || (x.at === w.at && x.order > w.order)),
      );
      return {
        calledAt: w.at,
        answeredAt: answer?.at ?? null,
        staff: answer?.staffId ?? null,
        seconds: answer ? (answer.at - w.at) / 1000 : null,
        business: answer ? bruteBusiness(isOpen, w.at, answer.at) : null,
      };
    });
}

describe('reports', () => {
  it('is registered with the event log, behind the activity handler', () => {
    expect(EVENT_HANDLERS.map((h) => h.name)).toContain('reports');
    expect(reportsHandler.after).toBe('conversation-activity');
  });

  it('every row and every figure matches a brute-force recount of random histories', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(conversationArb, { minLength: 1, maxLength: 4 }), async (conversations) => {
        const t = await createTenant();
        const businessId = t.business.id;
        const staff = [t.owner, await createStaff(businessId), await createStaff(businessId)];
        const ny = await createLocation(businessId, { timezone: 'America/New_York' });
        const london = await createLocation(businessId, { timezone: 'Europe/London' });
        await setOpeningHours(businessId, null, BUSINESS_HOURS);
        await setOpeningHours(businessId, ny.id, NINE_TO_FIVE);
        await setOpeningHours(businessId, london.id, LONDON_HOURS);
        const clocks = [
          openingClock({ timeZone: 'America/New_York', ...BUSINESS_HOURS }),
          openingClock({ timeZone: 'America/New_York', ...NINE_TO_FIVE }),
          openingClock({ timeZone: 'Europe/London', ...LONDON_HOURS }),
        ];
        const locationIds = [null, ny.id, london.id];

        const brute: BruteCycle[] = [];
        const calls: ReturnType<typeof bruteCalls> = [];
        for (const c of conversations) {
          const client = await createClient(businessId);
          const conv = await createConversation(businessId, client.id, { locationId: locationIds[c.location] });
          const written: Written[] = [];
          let at = c.start;
          let order = 0;
          for (const { step, gap, settle: settleHere } of c.steps) {
            at += gap * MIN;
            order++;
            const staffId = 'staff' in step && step.staff !== null ? staff[step.staff]!.id : null;
            const sentAt = new Date(at);
            let messageId: number | null = null;
            const message = async (values: Parameters<typeof createMessage>[1], type: 'message.received' | 'message.created') => {
              const m = await createMessage(conv, { sentAt, createdAt: sentAt, ...values });
              await db.execute(sql`
                insert into events (business_id, type, conversation_id, message_id, client_id, actor_type, actor_staff_id, data, occurred_at)
                values (${businessId}, ${type}, ${conv.id}, ${m.id}, ${client.id}, ${type === 'message.received' ? 'client' : staffId ? 'staff' : 'system'},
                  ${staffId}, ${JSON.stringify({ message_id: m.id, conversation_id: conv.id, client_id: client.id, channel: m.channel, message_type: m.messageType, direction: m.direction, status: m.status })}::jsonb,
                  ${sentAt.toISOString()}::timestamptz)`);
              return m.id;
            };
            const status = async (to: 'resolved' | 'open') => {
              await db.execute(sql`
                insert into events (business_id, type, conversation_id, client_id, actor_type, actor_staff_id, data, occurred_at)
                values (${businessId}, 'conversation.status_changed', ${conv.id}, ${client.id}, ${staffId ? 'staff' : 'api'}, ${staffId},
                  ${JSON.stringify({ conversation_id: conv.id, status: to, previous_status: to === 'resolved' ? 'open' : 'resolved' })}::jsonb,
                  ${sentAt.toISOString()}::timestamptz)`);
            };
            switch (step.kind) {
              case 'client':
                messageId = await message(
                  {
                    direction: 'inbound',
                    channel: step.channel,
                    messageType: step.channel === 'sms' ? 'TEXT' : 'EMAIL',
                    senderType: 'client',
                    status: 'received',
                  },
                  'message.received',
                );
                break;
              case 'reply':
                messageId = await message(
                  { channel: step.channel, messageType: step.channel === 'sms' ? 'TEXT' : 'EMAIL', staffId, status: 'delivered' },
                  'message.created',
                );
                break;
              case 'system':
                messageId = await message({ senderType: 'system', status: 'sent' }, 'message.created');
                break;
              case 'note':
                messageId = await message(
                  { messageType: 'NOTE', channel: null, direction: 'outbound', staffId, status: 'sent' },
                  'message.created',
                );
                break;
              case 'scheduled':
                messageId = await message({ staffId, status: 'scheduled', sendAt: new Date(at + 86_400_000) }, 'message.created');
                break;
              case 'missed_call':
                messageId = await message(
                  {
                    direction: 'inbound',
                    channel: 'voice',
                    messageType: 'CALL',
                    senderType: 'client',
                    status: 'no_answer',
                    callOutcome: step.voicemail ? 'voicemail' : 'missed',
                  },
                  'message.received',
                );
                break;
              case 'call_out':
                messageId = await message(
                  { channel: 'voice', messageType: 'CALL', staffId, status: 'completed' },
                  'message.created',
                );
                break;
              case 'resolve':
                await status('resolved');
                break;
              case 'reopen':
                await status('open');
                break;
            }
            if (settleHere && order % 3 === 0) await settle();
            written.push({
              at,
              step,
              messageId,
              order: messageId ?? Number.MAX_SAFE_INTEGER - 1000 + order,
              staffId,
              location: locationIds[c.location]!,
            });
          }
          // Resolutions sort by their line's id in the recount: within a millisecond, in the order written.
          written.forEach((w) => {
            if (w.messageId === null) w.order = Number.MAX_SAFE_INTEGER - 1000 + written.indexOf(w);
          });
          brute.push(...bruteCycles(conv.id, written, clocks[c.location]!));
          calls.push(...bruteCalls(written, clocks[c.location]!));
        }
        await settle();

        // The durable rows.
        const rows = await db.execute<Record<string, unknown>>(sql`
          select conversation_id, start_message_id::int, extract(epoch from started_at) * 1000 as start, channel, location_id,
            extract(epoch from first_reply_at) * 1000 as first_reply_at, first_reply_staff_id, first_response_seconds,
            first_response_business_seconds, extract(epoch from resolved_at) * 1000 as resolved_at, resolved_by_staff_id,
            resolution_seconds, resolution_business_seconds, replies
          from report_cycles where business_id = ${businessId} order by conversation_id, started_at`);
        const expected = brute.map((b) => ({
          conversation_id: b.conversationId,
          start_message_id: b.startMessageId,
          start: b.start,
          channel: b.channel,
          location_id: b.location,
          first_reply_at: b.firstReply?.at ?? null,
          first_reply_staff_id: b.firstReply?.staff ?? null,
          first_response_seconds: b.firstReply?.seconds ?? null,
          first_response_business_seconds: b.firstReply?.business ?? null,
          resolved_at: b.resolved?.at ?? null,
          resolved_by_staff_id: b.resolved?.staff ?? null,
          resolution_seconds: b.resolved?.seconds ?? null,
          resolution_business_seconds: b.resolved?.business ?? null,
          replies: b.replies.length,
        }));
        expect(
          rows.map((r) => ({
            ...r,
            start: Number(r.start),
            first_reply_at: r.first_reply_at === null ? null : Number(r.first_reply_at),
            resolved_at: r.resolved_at === null ? null : Number(r.resolved_at),
          })),
        ).toEqual(expected);

        // Every report figure, for every grouping and filters, against the brute force's own
        // percentiles: through the rollups (whole days and weeks; a London location's own days),
        // the rows for the partial days at either end, then through the rows alone.
        const from = new Date('2026-03-01T00:00:00Z');
        const to = new Date('2026-12-01T00:00:00Z');
        const queries: ReportQuery[] = [
          ...[undefined, ...GROUP_BYS].map((group_by) => ({ from, to, group_by })),
          { from, to, location_id: london.id, group_by: 'day' },
          { from, to, location_id: ny.id, group_by: 'staff' },
          { from, to, staff_id: staff[1]!.id, group_by: 'week' },
          { from, to, channel: 'sms', group_by: 'location' },
          { from, to, channel: 'email', staff_id: staff[0]!.id, group_by: 'day' },
        ];
        for (const rollups of [true, false]) {
          await db.execute(sql`update report_rollups set ready = ${rollups} where business_id = ${businessId}`);
          for (const q of queries) await expectReport(q, rollups);
        }

        async function expectReport(q: ReportQuery, rollups: boolean) {
          const zone = q.location_id === london.id ? 'Europe/London' : 'America/New_York';
          const scope = await reportScope(businessId, q);
          expect([scope.timeZone, scope.rollups]).toEqual([zone, rollups]);
          const day = (ms: number) =>
            new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
              new Date(ms),
            );
          const week = (ms: number) => {
            const d = new Date(`${day(ms)}T00:00:00Z`);
            d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
            return d.toISOString().slice(0, 10);
          };
          const g = q.group_by;
          const keyOf = (at: number, staffId: number | null, location: number | null, channel: string) =>
            !g
              ? 'all'
              : g === 'day'
                ? day(at)
                : g === 'week'
                  ? week(at)
                  : g === 'staff'
                    ? staffId
                    : g === 'location'
                      ? location
                      : channel;
          const wanted = (staffId: number | null, location: number | null, channel: string) =>
            (q.location_id === undefined || location === q.location_id) &&
            (q.staff_id === undefined || staffId === q.staff_id) &&
            (q.channel === undefined || channel === q.channel);
          const report = await responseTimesReport(businessId, q);
          const volume = await volumeReport(businessId, q);
          const first = new Map<unknown, [number, number][]>();
          const reply = new Map<unknown, [number, number][]>();
          const resolution = new Map<unknown, [number, number][]>();
          const opened = new Map<unknown, number>();
          const resolved = new Map<unknown, number>();
          const add = (m: Map<unknown, [number, number][]>, k: unknown, v: [number, number]) =>
            m.set(k, [...(m.get(k) ?? []), v]);
          const count = (m: Map<unknown, number>, k: unknown) => m.set(k, (m.get(k) ?? 0) + 1);
          for (const b of brute) {
            // Opened is nobody's: none under a staff filter.
            if (wanted(q.staff_id === undefined ? null : -1, b.location, b.channel))
              count(opened, keyOf(b.start, null, b.location, b.channel));
            if (b.firstReply && wanted(b.firstReply.staff, b.location, b.channel))
              add(first, keyOf(b.start, b.firstReply.staff, b.location, b.channel), [
                b.firstReply.seconds,
                b.firstReply.business,
              ]);
            if (b.resolved && wanted(b.resolved.staff, b.location, b.channel)) {
              add(resolution, keyOf(b.start, b.resolved.staff, b.location, b.channel), [b.resolved.seconds, b.resolved.business]);
              count(resolved, keyOf(b.resolved.at, b.resolved.staff, b.location, b.channel));
            }
            for (const r of b.replies)
              if (wanted(r.staff, b.location, r.channel))
                add(reply, keyOf(r.waiting, r.staff, b.location, r.channel), [r.seconds, r.business]);
          }
          const all = (m: Map<unknown, [number, number][]>) => [...m.values()].flat();
          const sum = (m: Map<unknown, number>) => [...m.values()].reduce((a, b) => a + b, 0);
          const what = JSON.stringify({ rollups, ...q });
          const close = (a: Stats, b: Stats) => {
            expect(a.count, what).toBe(b.count);
            for (const k of ['median_seconds', 'p90_seconds', 'median_business_seconds', 'p90_business_seconds'] as const) {
              if (b[k] === null) expect(a[k], what).toBeNull();
              else expect(a[k], what).toBeCloseTo(b[k], 6);
            }
          };
          close(report.total.first_response, statsOf(all(first)));
          close(report.total.reply, statsOf(all(reply)));
          close(report.total.resolution, statsOf(all(resolution)));
          expect([volume.total.conversations_opened, volume.total.conversations_resolved], what).toEqual([
            sum(opened),
            sum(resolved),
          ]);
          if (g) {
            const keys = new Set([...first.keys(), ...reply.keys(), ...resolution.keys()]);
            expect(new Set(report.groups.map((x) => x.key)), what).toEqual(keys);
            for (const x of report.groups) {
              close(x.first_response, statsOf(first.get(x.key) ?? []));
              close(x.reply, statsOf(reply.get(x.key) ?? []));
              close(x.resolution, statsOf(resolution.get(x.key) ?? []));
            }
            for (const k of new Set([...opened.keys(), ...resolved.keys()])) {
              const x = volume.groups.find((v) => v.key === k);
              expect([x?.conversations_opened, x?.conversations_resolved], `${what} ${String(k)}`).toEqual([
                opened.get(k) ?? 0,
                resolved.get(k) ?? 0,
              ]);
            }
          }
        }

        // Missed calls: answered by the first call back or reply, and how long it took.
        const callsReportTotal = (await callsReport(businessId, { from, to })).total;
        const answered = calls.filter((c) => c.answeredAt !== null);
        expect(callsReportTotal.calls).toBe(calls.length);
        expect(callsReportTotal.time_to_answer.count).toBe(answered.length);
        const expectedCalls = statsOf(answered.map((c) => [c.seconds!, c.business!]));
        for (const k of ['median_seconds', 'p90_seconds', 'median_business_seconds', 'p90_business_seconds'] as const) {
          if (expectedCalls[k] === null) expect(callsReportTotal.time_to_answer[k]).toBeNull();
          else expect(callsReportTotal.time_to_answer[k]).toBeCloseTo(expectedCalls[k], 6);
        }

        // The recount of the whole history (the backfill) writes the very same rows — where an open
        // cycle's count resumes included — and, counting the rollups again from nothing, the very
        // same rollups the handler kept from its changes.
        await db.execute(sql`update report_rollups set ready = true where business_id = ${businessId}`);
        const kept = async () => ({
          cycles: await db.execute(sql`
            select c.conversation_id, c.start_message_id, c.started_at, c.first_reply_at, c.first_response_business_seconds,
              c.resolved_at, c.resolution_business_seconds, c.replies, c.client_messages, c.last_message_at, c.last_message_id,
              c.waiting_message_id, c.waiting_since, c.waiting_channel,
              (select json_agg(json_build_object('w', r.waiting_message_id, 'r', r.reply_message_id, 's', r.staff_id, 'b', r.business_seconds)
                        order by r.waiting_since) from report_replies r where r.cycle_id = c.id) as reply_rows
            from report_cycles c where c.business_id = ${businessId} order by c.conversation_id, c.started_at`),
          messages: await db.execute(sql`
            select message_id, location_id, staff_id, channel, inbound, sent_at from report_messages
            where business_id = ${businessId} order by message_id`),
          histograms: await db.execute(sql`
            select local, dims, week, period, figure, business, location_id, staff_id, channel, bucket, n from report_histograms
            where business_id = ${businessId} and n <> 0 order by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10`),
          periods: await db.execute(sql`
            select week, period, figure, count, median_seconds, p90_seconds, median_business_seconds, p90_business_seconds
            from report_period_stats where business_id = ${businessId} order by 1, 2, 3`),
          days: await db.execute(sql`
            select local, day, location_id, staff_id, channel, opened, resolved, messages_in, messages_out from report_day_counts
            where business_id = ${businessId} and (opened, resolved, messages_in, messages_out) <> (0, 0, 0, 0)
            order by 1, 2, 3, 4, 5`),
        });
        const before = await kept();
        expect(before.histograms.length > 0).toBe(brute.some((b) => b.firstReply || b.resolved || b.replies.length));
        await recountBusinessReports(businessId);
        expect(await kept()).toEqual(before);
      }),
      { numRuns: 15 },
    );
  }, 240_000);

  it('a missed call answered within the millisecond of a later change is counted once (timestamps in µs, figures in ms)', async () => {
    const { business, owner } = await createTenant();
    const client = await createClient(business.id);
    const conv = await createConversation(business.id, client.id);
    const call = await createMessage(conv, {
      direction: 'inbound',
      senderType: 'client',
      channel: 'voice',
      messageType: 'CALL',
      status: 'no_answer',
      callOutcome: 'missed',
    });
    const reply = await createMessage(conv, { staffId: owner.id, status: 'delivered' });
    const text = await createMessage(conv, { direction: 'inbound', senderType: 'client', status: 'received' });
    // One millisecond holds all three, apart by microseconds: the rows keep milliseconds, the messages not.
    for (const [id, us] of [
      [call.id, 100],
      [reply.id, 200],
      [text.id, 300],
    ] as const)
      await db.execute(sql`update messages set sent_at = ${`2026-05-04T14:00:00.000${us}Z`}::timestamptz where id = ${id}`);
    await recountBusinessReports(business.id);
    const calls = () =>
      db.execute<{ answered_message_id: string }>(sql`
        select answered_message_id::text from report_missed_calls where business_id = ${business.id}`);
    expect((await calls()).map((c) => Number(c.answered_message_id))).toEqual([reply.id]);
    // The client's text is changed again (its event handed over once more): the call is neither lost nor doubled.
    await recountConversations(business.id, [{ conversationId: conv.id, messageId: text.id, at: '-infinity' }]);
    expect((await calls()).map((c) => Number(c.answered_message_id))).toEqual([reply.id]);
  });
});
