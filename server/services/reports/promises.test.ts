import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { ReportResponse } from '@/server/schemas/reports';
import { issueSession } from '@/server/services/auth';
import { MAX_REPORT_DAYS, GROUP_BYS, REPORTS } from '@/server/shared/reports';
import {
  createBusiness,
  createClient,
  createConversation,
  createLocation,
  createMessage,
  createStaff,
  createTenant,
} from '@/server/testing/factories';
import { api, getJson, jsonOf, restTenant, type Headers, type RestTenant } from '@/server/testing/http';
import { backfillReports, businessesToRecount, DEFAULT_BACKFILL_LIMIT } from './backfill';
import { EXPORT_COLUMNS } from './export';
import { recountBusinessReports } from './recount';

/**
 * What docs/api.md#reports promises, over REST against the database: the calls report's figures and
 * groups, volume's conversations opened and resolved, days and weeks in the location's time zone
 * with `location_id`, the manager role seeing everyone's figures, the export's filters, the
 * contract (OpenAPI) of each report's answer; and the backfill's own pick (businesses with client
 * messages but no cycle). One history, written as messages and resolution lines and counted by the
 * backfill's recount (the handler's code), with every figure worked out by hand below.
 */

const at = (iso: string) => new Date(iso);
const MIN = 60;

type History = {
  t: RestTenant;
  tokyo: number;
  plain: number; // a location without its own zone: the business's (America/New_York)
  ana: number; // role staff
  mia: number; // role manager
  owner: number;
  conv: Record<'c1' | 'c2' | 'c3', number>;
  as: (staffId: number) => Promise<Headers>;
};

let eventId = 1;

/** A resolution line, as the activity handler writes it from `conversation.status_changed`. */
async function resolve(businessId: number, conversationId: number, staffId: number, when: string) {
  await db.execute(sql`
    insert into conversation_activities (business_id, conversation_id, event_id, type, actor_type, actor_staff_id, data, occurred_at)
    values (${businessId}, ${conversationId}, ${eventId++}, 'conversation.status_changed', 'staff', ${staffId},
      ${JSON.stringify({ conversation_id: conversationId, status: 'resolved', previous_status: 'open' })}::jsonb, ${when}::timestamptz)`);
}

/**
 * The history (the business is in America/New_York: UTC−4 from 8 March 2026):
 * - c1 (Tokyo): a text Sunday 15 March 16:30Z (12:30 in New York, Monday 16 March 01:30 in Tokyo),
 *   Ana's reply 10 min later, resolved by Ana at 17:30Z.
 * - c2 (the plain location): an email 12 March 14:00Z, the owner's email 5 min later, resolved by
 *   the owner 20 March 15:00Z (8 days and 1 hour).
 * - c3 (no location): a text 13 March 15:00Z, the owner's reply 20 min later, resolved by Ana at 18:00Z;
 *   a text of the owner's at 16:00Z failed (30003). A client opts out by keyword on 14 March.
 * - c4 (plain): a missed call 16 March 15:00Z, a voicemail 15:10Z, Ana calls back 15:30Z.
 * - c5 (Tokyo): a voicemail 17 March 15:00Z (18 March 00:00 in Tokyo), the owner texts back 15:20Z.
 * - c6 (no location): a missed call 18 March 15:00Z, never answered.
 */
async function history(): Promise<History> {
  const t = await restTenant();
  const b = t.business.id;
  const tokyo = (await createLocation(b, { timezone: 'Asia/Tokyo' })).id;
  const plain = (await createLocation(b)).id;
  const ana = (await createStaff(b, { role: 'staff' })).id;
  const mia = (await createStaff(b, { role: 'manager' })).id;
  const owner = t.owner.id;
  const conversation = async (locationId: number | null) => {
    const client = await createClient(b);
    return createConversation(b, client.id, { locationId });
  };
  const clientText = (c: { id: number; businessId: number; clientId: number }, when: string, channel: 'sms' | 'email' = 'sms') =>
    createMessage(c, {
      direction: 'inbound',
      senderType: 'client',
      status: 'received',
      channel,
      messageType: channel === 'sms' ? 'TEXT' : 'EMAIL',
      sentAt: at(when),
    });
  const reply = (
    c: { id: number; businessId: number; clientId: number },
    staffId: number,
    when: string,
    channel: 'sms' | 'email' = 'sms',
  ) =>
    createMessage(c, {
      staffId,
      status: 'delivered',
      channel,
      messageType: channel === 'sms' ? 'TEXT' : 'EMAIL',
      sentAt: at(when),
    });
  const missed = (c: { id: number; businessId: number; clientId: number }, when: string, outcome: 'missed' | 'voicemail') =>
    createMessage(c, {
      direction: 'inbound',
      senderType: 'client',
      channel: 'voice',
      messageType: 'CALL',
      status: 'no_answer',
      callOutcome: outcome,
      sentAt: at(when),
    });

  const c1 = await conversation(tokyo);
  await clientText(c1, '2026-03-15T16:30:00Z');
  await reply(c1, ana, '2026-03-15T16:40:00Z');
  await resolve(b, c1.id, ana, '2026-03-15T17:30:00Z');
  const c2 = await conversation(plain);
  await clientText(c2, '2026-03-12T14:00:00Z', 'email');
  await reply(c2, owner, '2026-03-12T14:05:00Z', 'email');
  await resolve(b, c2.id, owner, '2026-03-20T15:00:00Z');
  const c3 = await conversation(null);
  await clientText(c3, '2026-03-13T15:00:00Z');
  await reply(c3, owner, '2026-03-13T15:20:00Z');
  await resolve(b, c3.id, ana, '2026-03-13T18:00:00Z');
  // Deliverability: a text of the owner's that failed, and an opt-out.
  await createMessage(c3, { staffId: owner, status: 'failed', errorCode: '30003', sentAt: at('2026-03-13T16:00:00Z') });
  await db.execute(sql`insert into opt_out_events (business_id, channel, address, action, source, created_at)
    values (${b}, 'sms', '+15550100999', 'opt_out', 'keyword', '2026-03-14T12:00:00Z')`);
  const c4 = await conversation(plain);
  await missed(c4, '2026-03-16T15:00:00Z', 'missed');
  await missed(c4, '2026-03-16T15:10:00Z', 'voicemail');
  await createMessage(c4, {
    staffId: ana,
    channel: 'voice',
    messageType: 'CALL',
    status: 'completed',
    sentAt: at('2026-03-16T15:30:00Z'),
  });
  const c5 = await conversation(tokyo);
  await missed(c5, '2026-03-17T15:00:00Z', 'voicemail');
  await reply(c5, owner, '2026-03-17T15:20:00Z');
  const c6 = await conversation(null);
  await missed(c6, '2026-03-18T15:00:00Z', 'missed');
  await recountBusinessReports(b);

  const as = async (staffId: number) => {
    const session = await issueSession({ kind: 'platform', scope: 'test' }, { business_id: b, staff_id: staffId });
    return { authorization: `Bearer ${session.token}` };
  };
  return { t, tokyo, plain, ana, mia, owner, conv: { c1: c1.id, c2: c2.id, c3: c3.id }, as };
}

const MARCH = 'from=2026-03-01T00:00:00Z&to=2026-04-01T00:00:00Z';

let h: History;
beforeAll(async () => {
  h = await history();
});

const report = async (name: string, query: string, headers: Headers = h.t.key) => {
  const res = await getJson(`${h.t.base}/reports/${name}?${query}`, headers);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};
/** Groups keyed by id come in id order (then none). */
const byKey = <T extends { key: number }>(xs: T[]) => [...xs].sort((a, b) => a.key - b.key);
const groupsOf = <F extends string>(body: { groups: Record<string, unknown>[] }, ...fields: F[]) =>
  body.groups.map((g) => Object.fromEntries([['key', g.key], ...fields.map((f) => [f, g[f]])]));

describe('the calls report (docs/api.md#reports)', () => {
  it('counts missed calls and voicemails, how each was answered and how fast, in total and per group', async () => {
    const total = (await report('calls', MARCH)).total;
    // Answered in 30 and 20 min (Ana's call back answers both) and 20 min (the owner's text).
    expect(total).toEqual({
      calls: 4,
      missed: 2,
      voicemails: 2,
      called_back: 2,
      texted: 1,
      time_to_answer: {
        count: 3,
        median_seconds: 20 * MIN,
        p90_seconds: 28 * MIN, // 1200, 1200, 1800: rank 1.8 → 1200 + 0.8 × 600
        median_business_seconds: 20 * MIN,
        p90_business_seconds: 28 * MIN,
      },
    });
    const fields = ['calls', 'missed', 'voicemails', 'called_back', 'texted'] as const;
    // Staff: who answered (none: never answered), ids in order, none last.
    expect(groupsOf(await report('calls', `${MARCH}&group_by=staff`), ...fields)).toEqual([
      ...byKey([
        { key: h.owner, calls: 1, missed: 0, voicemails: 1, called_back: 0, texted: 1 },
        { key: h.ana, calls: 2, missed: 1, voicemails: 1, called_back: 2, texted: 0 },
      ]),
      { key: null, calls: 1, missed: 1, voicemails: 0, called_back: 0, texted: 0 },
    ]);
    expect(groupsOf(await report('calls', `${MARCH}&group_by=location`), 'calls')).toEqual([
      ...byKey([
        { key: h.tokyo, calls: 1 },
        { key: h.plain, calls: 2 },
      ]),
      { key: null, calls: 1 },
    ]);
    expect(groupsOf(await report('calls', `${MARCH}&group_by=day`), 'calls', 'time_to_answer')).toEqual([
      { key: '2026-03-16', calls: 2, time_to_answer: expect.objectContaining({ count: 2, median_seconds: 25 * MIN }) },
      { key: '2026-03-17', calls: 1, time_to_answer: expect.objectContaining({ count: 1, median_seconds: 20 * MIN }) },
      { key: '2026-03-18', calls: 1, time_to_answer: expect.objectContaining({ count: 0, median_seconds: null }) },
    ]);
    expect(groupsOf(await report('calls', `${MARCH}&group_by=week`), 'calls')).toEqual([{ key: '2026-03-16', calls: 4 }]);
    // staff_id: the calls they answered.
    expect((await report('calls', `${MARCH}&staff_id=${h.ana}`)).total).toMatchObject({ calls: 2, called_back: 2, texted: 0 });
    // Calls are voice: a channel is a 422 at the field, as filter or grouping.
    for (const [q, loc] of [
      ['channel=sms', 'channel'],
      ['group_by=channel', 'group_by'],
    ]) {
      const res = await getJson(`${h.t.base}/reports/calls?${MARCH}&${q}`, h.t.key);
      expect(res.status).toBe(422);
      expect(res.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([['query', loc]]);
    }
  });
});

describe('the volume report: conversations opened and resolved', () => {
  it('opened: cycles started in the range; resolved: cycles resolved in it, wherever they started', async () => {
    const figures = (b: { total: Record<string, unknown> }) => ({
      opened: b.total.conversations_opened,
      resolved: b.total.conversations_resolved,
    });
    expect(figures(await report('volume', MARCH))).toEqual({ opened: 3, resolved: 3 });
    // Before the 19th: c2 started (12th) but is resolved on the 20th.
    expect(figures(await report('volume', 'from=2026-03-01T00:00:00Z&to=2026-03-19T00:00:00Z'))).toEqual({
      opened: 3,
      resolved: 2,
    });
    expect(figures(await report('volume', 'from=2026-03-19T00:00:00Z&to=2026-04-01T00:00:00Z'))).toEqual({
      opened: 0,
      resolved: 1,
    });
    // A staff member opens nothing (a client does); resolved: by them.
    expect(figures(await report('volume', `${MARCH}&staff_id=${h.ana}`))).toEqual({ opened: 0, resolved: 2 });
    expect(figures(await report('volume', `${MARCH}&staff_id=${h.owner}`))).toEqual({ opened: 0, resolved: 1 });
    // By day: opened on the day the cycle started, resolved on the day it was resolved.
    const byDay = groupsOf(await report('volume', `${MARCH}&group_by=day`), 'conversations_opened', 'conversations_resolved');
    expect(byDay.filter((g) => g.conversations_opened || g.conversations_resolved)).toEqual([
      { key: '2026-03-12', conversations_opened: 1, conversations_resolved: 0 },
      { key: '2026-03-13', conversations_opened: 1, conversations_resolved: 1 },
      { key: '2026-03-15', conversations_opened: 1, conversations_resolved: 1 },
      { key: '2026-03-20', conversations_opened: 0, conversations_resolved: 1 },
    ]);
    // By staff: resolutions are whose resolved them; openings are nobody's.
    const byStaff = groupsOf(await report('volume', `${MARCH}&group_by=staff`), 'conversations_opened', 'conversations_resolved');
    expect(byStaff.find((g) => g.key === h.ana)).toMatchObject({ conversations_opened: 0, conversations_resolved: 2 });
    expect(byStaff.find((g) => g.key === h.owner)).toMatchObject({ conversations_opened: 0, conversations_resolved: 1 });
    expect(byStaff.find((g) => g.key === null)).toMatchObject({ conversations_opened: 3, conversations_resolved: 0 });
  });
});

describe('days and weeks in the location’s time zone with location_id', () => {
  it('reads them on Tokyo’s clock for a Tokyo location, on the business’s without one, and says which', async () => {
    // c1 started Sunday 15 March 12:30 in New York: Monday 16 March 01:30 in Tokyo.
    const business = await report('response-times', `${MARCH}&group_by=day`);
    expect(business.time_zone).toBe('America/New_York');
    const keys = (body: { groups: { key: unknown }[] }) => body.groups.map((g) => g.key);
    expect(keys(business)).toEqual(['2026-03-12', '2026-03-13', '2026-03-15']); // c2, c3, c1
    const tokyo = await report('response-times', `${MARCH}&group_by=day&location_id=${h.tokyo}`);
    expect(tokyo.time_zone).toBe('Asia/Tokyo');
    expect(keys(tokyo)).toEqual(['2026-03-16']);
    // Weeks start on Monday there too: the week of 16 March in Tokyo, of 9 March in New York.
    expect(keys(await report('response-times', `${MARCH}&group_by=week&location_id=${h.tokyo}`))).toEqual(['2026-03-16']);
    const weeks = (await report('volume', `${MARCH}&group_by=week`)).groups;
    expect(weeks.find((g: { key: string }) => g.key === '2026-03-09').conversations_opened).toBe(3);
    // The calls report too: c5's voicemail came 17 March 15:00Z, midnight of the 18th in Tokyo.
    expect(groupsOf(await report('calls', `${MARCH}&group_by=day&location_id=${h.tokyo}`), 'calls')).toEqual([
      { key: '2026-03-18', calls: 1 },
    ]);
    // A location without its own zone reads days on the business's clock.
    expect((await report('volume', `${MARCH}&location_id=${h.plain}`)).time_zone).toBe('America/New_York');
  });
});

describe('who sees what: the manager role', () => {
  it('a manager sees every staff member’s figures and the whole export, as an owner does; a staff member only their own', async () => {
    const manager = await h.as(h.mia);
    const all = await report('response-times', `${MARCH}&group_by=staff`, manager);
    expect(all.total.first_response.count).toBe(3);
    expect(all.groups.map((g: { key: number }) => g.key).sort()).toEqual([h.ana, h.owner].sort());
    expect((await report('response-times', `${MARCH}&staff_id=${h.ana}`, manager)).total.first_response.count).toBe(1);
    expect((await report('volume', `${MARCH}&staff_id=${h.owner}`, manager)).total.conversations_resolved).toBe(1);
    const csv = await (await api.get(`${h.t.base}/reports/export?${MARCH}`, { headers: manager })).text();
    expect(csv.trim().split('\r\n')).toHaveLength(1 + 3);
    // The same requests from Ana (role staff): her own, and naming the owner is a 403.
    const ana = await h.as(h.ana);
    expect((await report('response-times', `${MARCH}&group_by=staff`, ana)).groups.map((g: { key: number }) => g.key)).toEqual([
      h.ana,
    ]);
    expect((await getJson(`${h.t.base}/reports/response-times?${MARCH}&staff_id=${h.owner}`, ana)).status).toBe(403);
  });
});

describe('the export’s filters', () => {
  const exported = async (query: string) => {
    const res = await api.get(`${h.t.base}/reports/export?${MARCH}${query}`, { headers: h.t.key });
    expect(res.status).toBe(200);
    const [header, ...lines] = (await res.text()).trim().split('\r\n');
    expect(header).toBe(EXPORT_COLUMNS.join(','));
    return lines.map((l) => Number(l.split(',')[EXPORT_COLUMNS.indexOf('conversation_id')]));
  };

  it('location_id, channel and staff_id (the cycles they answered first or resolved) narrow the cycles; the range too', async () => {
    const { c1, c2, c3 } = h.conv;
    expect(await exported('')).toEqual([c2, c3, c1]); // in the order they started
    expect(await exported(`&location_id=${h.tokyo}`)).toEqual([c1]);
    expect(await exported(`&location_id=${h.plain}`)).toEqual([c2]);
    expect(await exported('&channel=email')).toEqual([c2]);
    expect(await exported('&channel=sms')).toEqual([c3, c1]);
    // c3: first answered by the owner, resolved by Ana: in both.
    expect(await exported(`&staff_id=${h.ana}`)).toEqual([c3, c1]);
    expect(await exported(`&staff_id=${h.owner}`)).toEqual([c2, c3]);
    expect(await exported(`&staff_id=${h.mia}`)).toEqual([]);
    expect(await exported(`&channel=sms&location_id=${h.tokyo}&staff_id=${h.ana}`)).toEqual([c1]);
    const res = await api.get(`${h.t.base}/reports/export?from=2026-03-13T00:00:00Z&to=2026-03-14T00:00:00Z`, {
      headers: h.t.key,
    });
    expect(
      (await res.text())
        .trim()
        .split('\r\n')
        .slice(1)
        .map((l) => Number(l.split(',')[0])),
    ).toEqual([c3]);
    // The same checks as the reports: a filter not of the business is a 422 at the field.
    for (const [q, loc] of [
      ['&location_id=2147483647', 'location_id'],
      ['&staff_id=2147483647', 'staff_id'],
      ['&channel=voice', 'channel'],
    ]) {
      const bad = await api.get(`${h.t.base}/reports/export?${MARCH}${q}`, { headers: h.t.key });
      expect(bad.status).toBe(422);
      expect((await jsonOf(bad)).detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([['query', loc]]);
    }
  });
});

describe('the contract of a report’s answer', () => {
  it('every report, with each grouping, is exactly what ReportResponse documents (no field more or less)', async () => {
    for (const name of REPORTS) {
      for (const g of [undefined, ...GROUP_BYS]) {
        if (name === 'calls' && g === 'channel') continue; // a 422
        const body = await report(name, `${MARCH}${g ? `&group_by=${g}` : ''}`);
        const parsed = ReportResponse.safeParse(body);
        expect(parsed.error?.issues ?? [], `${name} ${g}`).toEqual([]);
        if (g) expect(body.groups.length, `${name} ${g}`).toBeGreaterThan(0);
      }
    }
  });

  it('OpenAPI states each report’s figures and the range limit', async () => {
    const doc = await jsonOf(await api.get('/api/v1/openapi.json'));
    const op = doc.paths['/businesses/{business_id}/reports/{report}'].get;
    expect(op.parameters.find((p: { name: string }) => p.name === 'to').description).toContain(`at most ${MAX_REPORT_DAYS} days`);
    const schemas = doc.components.schemas;
    expect(schemas.ReportResponse.discriminator.mapping).toEqual({
      'response-times': '#/components/schemas/ResponseTimesReport',
      volume: '#/components/schemas/VolumeReport',
      calls: '#/components/schemas/CallsReport',
      deliverability: '#/components/schemas/DeliverabilityReport',
    });
    const total = (name: string) => schemas[name].properties.total;
    expect(total('ResponseTimesReport').required).toEqual(['first_response', 'reply', 'resolution']);
    expect(total('VolumeReport').properties.messages.required).toEqual([
      'sms_in',
      'sms_out',
      'email_in',
      'email_out',
      'voice_in',
      'voice_out',
    ]);
    expect(total('CallsReport').required).toEqual(['calls', 'missed', 'voicemails', 'called_back', 'texted', 'time_to_answer']);
    expect(total('DeliverabilityReport').properties.failures.items.required).toEqual(['reason', 'count']);
    expect(total('CallsReport').properties.time_to_answer.required).toEqual([
      'count',
      'median_seconds',
      'p90_seconds',
      'median_business_seconds',
      'p90_business_seconds',
    ]);
  });
});

describe('the backfill’s own pick (npm run reports:recount without arguments)', () => {
  it('businesses with client texts or emails and no cycle, oldest id first, at most --limit; then not again', async () => {
    const business = async (
      write: (c: { id: number; businessId: number; clientId: number }, staffId: number) => Promise<unknown>,
    ) => {
      const t = await createTenant();
      const client = await createClient(t.business.id);
      const conv = await createConversation(t.business.id, client.id);
      await write(conv, t.owner.id);
      return t.business.id;
    };
    const when = at('2026-02-02T15:00:00Z');
    const text = { direction: 'inbound', senderType: 'client', status: 'received', sentAt: when } as const;
    const texted = await business((c) => createMessage(c, text));
    // Calls, our own texts and notes are no client message: nothing to count.
    const callsOnly = await business(async (c, staffId) => {
      await createMessage(c, { ...text, channel: 'voice', messageType: 'CALL', status: 'no_answer', callOutcome: 'missed' });
      await createMessage(c, { staffId, sentAt: when });
      await createMessage(c, { staffId, channel: null, messageType: 'NOTE', sentAt: when });
    });
    const counted = await business((c) => createMessage(c, { ...text, channel: 'email', messageType: 'EMAIL' }));
    await recountBusinessReports(counted);
    const emailed = await business((c) => createMessage(c, { ...text, channel: 'email', messageType: 'EMAIL' }));
    const silent = (await createTenant()).business.id;

    const picked = await businessesToRecount({ limit: 100_000 });
    expect(picked).toEqual([...picked].sort((a, b) => a - b)); // oldest id first
    expect(picked.filter((id) => [texted, callsOnly, counted, emailed, silent].includes(id))).toEqual([texted, emailed]);
    // --limit: the first of that order.
    const before = picked.indexOf(emailed);
    expect(await businessesToRecount({ limit: before })).toEqual(picked.slice(0, before));
    expect(DEFAULT_BACKFILL_LIMIT).toBe(100);
    expect(await businessesToRecount()).toEqual(picked.slice(0, DEFAULT_BACKFILL_LIMIT));

    const done = await backfillReports({ limit: 100_000 });
    expect([...done.keys()]).toEqual(picked);
    const cycles = await db.execute<{ business_id: number; n: number }>(sql`
      select business_id, count(*)::int as n from report_cycles where business_id in (${texted}, ${emailed}) group by 1 order by 1`);
    expect(cycles).toEqual([
      { business_id: texted, n: 1 },
      { business_id: emailed, n: 1 },
    ]);
    expect(await businessesToRecount({ limit: 100_000 })).toEqual([]);
  });

  it('--all picks every business, past the default limit (a second run would otherwise redo the same first ones)', async () => {
    for (let i = 0; i <= DEFAULT_BACKFILL_LIMIT; i++) await createBusiness();
    const every = (await db.execute<{ id: number }>(sql`select id from businesses order by id`)).map((r) => r.id);
    expect(every.length).toBeGreaterThan(DEFAULT_BACKFILL_LIMIT);
    expect(await businessesToRecount({ all: true })).toEqual(every);
  });
});
