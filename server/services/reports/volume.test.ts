import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import {
  createClient,
  createConversation,
  createLocation,
  createMessage,
  createStaff,
  createTenant,
} from '@/server/testing/factories';
import { backfillReports, businessesToRecount } from './backfill';
import { GROUP_BYS, type GroupBy } from '@/server/shared/reports';
import { deliverabilityReport, reportScope, volumeReport, type ReportQuery } from './read';
import { recountBusinessReports } from './recount';

/**
 * The volume and deliverability reports with data (docs/api.md#reports): seeded messages in and
 * out by channel, failures by reason, notes and scheduled messages (not counted), opt-outs and
 * opt-ins; every figure of every grouping and filter against a brute-force count in JavaScript,
 * read through the rollups (whole days) and the rows (the partial days at either end), then through
 * the rows alone (rollups not ready). The messages are history written without events: counted by
 * the backfill, as `npm run reports:recount` counts history that predates the handler.
 * And the backfill (`npm run reports:recount`): which businesses it picks, and that it counts them.
 */

type Seeded = {
  sentAt: Date;
  channel: 'sms' | 'email' | 'voice';
  direction: 'inbound' | 'outbound';
  type: 'TEXT' | 'EMAIL' | 'CALL' | 'NOTE';
  status: string;
  reason: string | null;
  staffId: number | null;
  locationId: number | null;
};

/** A small deterministic generator, so a failure reproduces. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const dayIn = (at: Date, tz: string) => at.toLocaleDateString('en-CA', { timeZone: tz });
const weekIn = (at: Date, tz: string) => {
  const d = new Date(`${dayIn(at, tz)}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  return d.toISOString().slice(0, 10);
};

function keyOf(
  g: GroupBy,
  m: { at: Date; staffId: number | null; locationId: number | null; channel: string | null },
  tz: string,
) {
  switch (g) {
    case 'day':
      return dayIn(m.at, tz);
    case 'week':
      return weekIn(m.at, tz);
    case 'staff':
      return m.staffId;
    case 'location':
      return m.locationId;
    case 'channel':
      return m.channel;
  }
}

async function seed() {
  const { business } = await createTenant();
  const [locA, locB] = [await createLocation(business.id), await createLocation(business.id)];
  const staffIds = [(await createStaff(business.id)).id, (await createStaff(business.id)).id];
  const locations = [locA.id, locB.id, null];
  const convs = [];
  for (const loc of locations) {
    const client = await createClient(business.id);
    convs.push({ conv: await createConversation(business.id, client.id, { locationId: loc }), locationId: loc });
  }
  const random = rng(39);
  const start = Date.parse('2026-03-05T00:00:00Z'); // across the US change to summer time (March 8)
  const seeded: Seeded[] = [];
  for (let i = 0; i < 160; i++) {
    const { conv, locationId } = convs[Math.floor(random() * convs.length)]!;
    const r = random();
    const channel = r < 0.5 ? 'sms' : r < 0.8 ? 'email' : 'voice';
    const direction = random() < 0.45 ? 'inbound' : 'outbound';
    const note = direction === 'outbound' && random() < 0.08;
    const scheduled = !note && direction === 'outbound' && random() < 0.05;
    const failing = !note && !scheduled && direction === 'outbound' && channel !== 'voice' && random() < 0.3;
    const reason = failing ? (['30003', '30007', null, 'mailbox_full'] as const)[Math.floor(random() * 4)]! : null;
    const status = note
      ? 'sent'
      : scheduled
        ? 'scheduled'
        : failing
          ? channel === 'email'
            ? 'bounced'
            : random() < 0.5
              ? 'failed'
              : 'undelivered'
          : direction === 'inbound'
            ? 'received'
            : channel === 'voice'
              ? 'completed'
              : 'delivered';
    const type = note ? 'NOTE' : channel === 'sms' ? 'TEXT' : channel === 'email' ? 'EMAIL' : 'CALL';
    const staffId = direction === 'outbound' ? staffIds[Math.floor(random() * 2)]! : null;
    const sentAt = new Date(start + Math.floor(random() * 9 * 86_400_000));
    await createMessage(conv, {
      channel: note ? null : channel,
      direction,
      messageType: type,
      senderType: direction === 'inbound' ? 'client' : 'staff',
      staffId,
      status: status as never,
      errorCode: reason,
      sendAt: scheduled ? new Date(sentAt.getTime() + 86_400_000) : null,
      sentAt,
    });
    if (!note && !scheduled) seeded.push({ sentAt, channel, direction, type, status, reason, staffId, locationId });
  }
  const optOuts: { channel: 'sms' | 'email'; action: string; at: Date }[] = [];
  for (let i = 0; i < 25; i++) {
    const o = {
      channel: random() < 0.6 ? ('sms' as const) : ('email' as const),
      action: random() < 0.8 ? 'opt_out' : 'opt_in',
      at: new Date(start + Math.floor(random() * 9 * 86_400_000)),
    };
    optOuts.push(o);
    await db.execute(sql`insert into opt_out_events (business_id, channel, address, action, source, created_at)
      values (${business.id}, ${o.channel}, ${`addr${i}`}, ${o.action}, ${o.action === 'opt_out' ? 'keyword' : 'staff'}, ${o.at.toISOString()})`);
  }
  return { business, staffIds, locations: [locA.id, locB.id], seeded, optOuts, start };
}

const NAMES = ['sms_in', 'sms_out', 'email_in', 'email_out', 'voice_in', 'voice_out'] as const;

function bruteVolume(rows: Seeded[]) {
  return Object.fromEntries(
    NAMES.map((n) => {
      const [channel, dir] = n.split('_');
      return [n, rows.filter((m) => m.channel === channel && m.direction === (dir === 'in' ? 'inbound' : 'outbound')).length];
    }),
  );
}

function countBy<T>(rows: T[], key: (r: T) => string | null) {
  const out = new Map<string | null, number>();
  for (const r of rows) out.set(key(r), (out.get(key(r)) ?? 0) + 1);
  return [...out].map(([k, count]) => ({ k, count }));
}

const sortFailures = (xs: { reason: string | null; count: number }[]) =>
  [...xs].sort((a, b) => String(a.reason).localeCompare(String(b.reason)));
const sortOpt = (xs: { channel: string; count: number }[]) => [...xs].sort((a, b) => a.channel.localeCompare(b.channel));

describe('volume and deliverability reports with data', () => {
  it('match a brute-force count for every grouping and filter', async () => {
    const { business, staffIds, locations, seeded, optOuts, start } = await seed();
    // The seed covers what the figures count: every channel both ways, failures with and without a reason.
    expect(new Set(seeded.map((m) => `${m.channel}_${m.direction}`)).size).toBe(6);
    expect(
      new Set(seeded.filter((m) => m.reason !== null || m.status === 'failed').map((m) => m.reason)).size,
    ).toBeGreaterThanOrEqual(3);
    const base = { from: new Date(start - 86_400_000), to: new Date(start + 11 * 86_400_000) };
    const queries: ReportQuery[] = [
      base,
      ...GROUP_BYS.map((group_by) => ({ ...base, group_by })),
      { ...base, channel: 'sms', group_by: 'day' },
      { ...base, channel: 'email' },
      { ...base, location_id: locations[0], group_by: 'staff' },
      { ...base, staff_id: staffIds[1], group_by: 'channel' },
      { ...base, from: new Date(start + 2 * 86_400_000), to: new Date(start + 5 * 86_400_000), group_by: 'location' },
    ];
    await recountBusinessReports(business.id);
    for (const rollups of [true, false]) {
      await db.execute(sql`update report_rollups set ready = ${rollups} where business_id = ${business.id}`);
      expect((await reportScope(business.id, base)).rollups).toBe(rollups);
      await expectFigures(rollups);
    }
    async function expectFigures(rollups: boolean) {
      for (const q of queries) {
        const inScope = (m: Seeded) =>
          m.sentAt >= q.from &&
          m.sentAt < q.to &&
          (q.location_id === undefined || m.locationId === q.location_id) &&
          (q.channel === undefined || m.channel === q.channel) &&
          (q.staff_id === undefined || (m.staffId === q.staff_id && m.direction === 'outbound'));
        const rows = seeded.filter(inScope);
        const volume = await volumeReport(business.id, q);
        const tz = volume.time_zone;
        const at = (m: Seeded) => ({ at: m.sentAt, staffId: m.staffId, locationId: m.locationId, channel: m.channel });
        expect(volume.total.messages, JSON.stringify({ rollups, ...q })).toEqual(bruteVolume(rows));
        if (q.group_by) {
          const g = q.group_by;
          const keys = [...new Set(rows.map((m) => keyOf(g, at(m), tz)))];
          for (const k of keys) {
            const group = volume.groups.find((x) => x.key === k);
            expect(group?.messages, `${JSON.stringify({ rollups, ...q })} ${k}`).toEqual(
              bruteVolume(rows.filter((m) => keyOf(g, at(m), tz) === k)),
            );
          }
        }

        const deliverability = await deliverabilityReport(business.id, q);
        const failed = rows.filter(
          (m) =>
            m.direction === 'outbound' &&
            (m.type === 'TEXT' || m.type === 'EMAIL') &&
            ['failed', 'undelivered', 'bounced'].includes(m.status),
        );
        const failures = (xs: Seeded[]) =>
          sortFailures(countBy(xs, (m) => m.reason).map(({ k, count }) => ({ reason: k, count })));
        const opts = optOuts.filter(
          (o) =>
            o.action === 'opt_out' &&
            o.at >= q.from &&
            o.at < q.to &&
            (q.channel === undefined || o.channel === q.channel) &&
            q.staff_id === undefined &&
            q.location_id === undefined,
        );
        const optCounts = (xs: typeof opts) =>
          sortOpt(countBy(xs, (o) => o.channel).map(({ k, count }) => ({ channel: k!, count })));
        expect(sortFailures(deliverability.total.failures), JSON.stringify({ rollups, ...q })).toEqual(failures(failed));
        expect(sortOpt(deliverability.total.opt_outs), JSON.stringify({ rollups, ...q })).toEqual(optCounts(opts));
        if (q.group_by) {
          const g = q.group_by;
          for (const k of new Set(failed.map((m) => keyOf(g, at(m), tz)))) {
            const group = deliverability.groups.find((x) => x.key === k);
            expect(sortFailures(group?.failures ?? []), `${JSON.stringify({ rollups, ...q })} ${k}`).toEqual(
              failures(failed.filter((m) => keyOf(g, at(m), tz) === k)),
            );
          }
          if (g === 'day' || g === 'week' || g === 'channel') {
            const optKey = (o: (typeof opts)[number]) =>
              keyOf(g, { at: o.at, staffId: null, locationId: null, channel: o.channel }, tz);
            for (const k of new Set(opts.map(optKey))) {
              const group = deliverability.groups.find((x) => x.key === k);
              expect(sortOpt(group?.opt_outs ?? []), `${JSON.stringify({ rollups, ...q })} ${k}`).toEqual(
                optCounts(opts.filter((o) => optKey(o) === k)),
              );
            }
          }
          // No group the brute force does not know of.
          expect(deliverability.groups.every((x) => x.failures.length + x.opt_outs.length > 0)).toBe(true);
        }
      }
    }
  });
});

describe('reports backfill (npm run reports:recount)', () => {
  it('recounts the businesses whose history predates the handler, bounded, and not again', async () => {
    // History written straight into the tables, as before the handler: messages, no report rows.
    const olds = [];
    for (let i = 0; i < 3; i++) {
      const { business, owner } = await createTenant();
      const client = await createClient(business.id);
      const conv = await createConversation(business.id, client.id);
      const t0 = Date.parse('2026-01-10T15:00:00Z');
      await createMessage(conv, { direction: 'inbound', senderType: 'client', status: 'received', sentAt: new Date(t0) });
      await createMessage(conv, { staffId: owner.id, status: 'delivered', sentAt: new Date(t0 + 90_000) });
      olds.push(business.id);
    }
    const picked = await businessesToRecount({ limit: 10_000 });
    for (const id of olds) expect(picked).toContain(id);
    // Bounded: --limit 1 recounts one business per run.
    const first = await backfillReports({ businessIds: [olds[0]!], limit: 1 });
    expect([...first]).toEqual([[olds[0], 1]]);
    const [row] = await db.execute<{ n: number; s: number }>(
      sql`select count(*)::int as n, max(first_response_seconds) as s from report_cycles where business_id = ${olds[0]!}`,
    );
    expect(row).toEqual({ n: 1, s: 90 });
    expect(await businessesToRecount({ limit: 10_000 })).not.toContain(olds[0]);
    const lines: string[] = [];
    const rest = await backfillReports({ businessIds: olds.slice(1) }, (l) => lines.push(l));
    expect([...rest.keys()]).toEqual(olds.slice(1));
    expect(lines).toHaveLength(2);
    const after = await businessesToRecount({ limit: 10_000 });
    for (const id of olds) expect(after).not.toContain(id);
  });
});
