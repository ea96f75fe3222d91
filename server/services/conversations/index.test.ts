import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { conversations, messages } from '@/db/schema';
import { ensureConversations, touchStatement } from './activity';
import { assignConversation, loadConversation, wakeSnoozedConversations } from './index';
import {
  createBusiness,
  createClient,
  createConversation,
  createLocation,
  createMessage,
  createSmsNumber,
  createStaff,
  createTenant,
} from '@/server/testing/factories';
import { api, getJson, type Headers, locs, postJson, restTenant } from '@/server/testing/http';
import { genericPlan } from '@/server/testing/plans';

/**
 * Conversations through the real REST handlers (docs/api.md#conventions, #conversations, #conversation-statuses, #snooze):
 * the list and every filter, the filter counts, create-or-retrieve, assign, status and snooze, label,
 * client details, and tenancy on every conversation/message/staff path.
 */

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const HOUR = 3_600_000;

const tenant = restTenant;
type Tenant = Awaited<ReturnType<typeof tenant>>;

const get = getJson;
const post = postJson;
const convIds = (body: { conversations: { conversation_id: number }[] }) => body.conversations.map((c) => c.conversation_id);

/** An inbound SMS through the real record endpoint (docs/api.md#record-mode). */
async function recordInbound(t: Tenant, clientId: number, text: string) {
  const res = await post(`${t.base}/sms/record`, t.key, {
    sender_type: 'client',
    messages: [{ client_id: clientId, message: text, direction: 'inbound' }],
  });
  expect(res.status).toBe(200);
  return res.body.message_ids[0] as number;
}

/**
 * Five conversations covering every status, assignment, channel, label, location, unread and
 * flagged case, newest activity first in this order: alice, bob, carla, dan, eve. Plus another
 * business with look-alike data that must never show up.
 */
async function seedInbox() {
  const t = await tenant();
  const b = t.business.id;
  const downtown = await createLocation(b, { name: 'Downtown' });
  const uptown = await createLocation(b, { name: 'Uptown' });
  const westside = await createLocation(b, { name: 'Westside' });
  const maya = await createStaff(b, { name: 'Maya Chen' });
  const former = await createStaff(b, { name: 'Former Staff', active: false });
  const now = Date.now();
  const at = (hoursAgo: number) => new Date(now - hoursAgo * HOUR);
  const make = async (client: Parameters<typeof createClient>[1], conv: Parameters<typeof createConversation>[2]) => {
    const c = await createClient(b, client);
    return { client: c, conv: await createConversation(b, c.id, conv) };
  };
  const alice = await make(
    { name: 'Alice Walker', email: 'alice.walker@example.test', phoneNumber: '+12125550101', locationId: downtown.id },
    {
      status: 'open',
      assignedStaffId: t.owner.id,
      lastChannel: 'sms',
      locationId: downtown.id,
      label: 'VIP',
      unreadCount: 2,
      flaggedCount: 1,
      lastActivityAt: at(1),
    },
  );
  const bob = await make(
    { name: 'Bob Stone', email: 'Bob.Stone@Example.test', phoneNumber: '+12125550102', locationId: uptown.id },
    { status: 'pending', assignedStaffId: maya.id, lastChannel: 'email', locationId: uptown.id, lastActivityAt: at(2) },
  );
  const carla = await make(
    { name: 'Carla 100% Natural', email: 'carla@example.test', phoneNumber: '+12125550103' },
    {
      status: 'snoozed',
      snoozedUntil: new Date(now + 24 * HOUR),
      lastChannel: 'voice',
      locationId: downtown.id,
      label: 'VIP',
      unreadCount: 1,
      lastActivityAt: at(3),
    },
  );
  const dan = await make(
    { name: 'Dan_Under', email: 'dan@example.test', phoneNumber: '+12125550104' },
    { status: 'resolved', lastChannel: 'sms', label: 'Follow up', flaggedCount: 2, lastActivityAt: at(4) },
  );
  const eve = await make(
    { name: 'Eve Adams', email: 'eve@example.test', phoneNumber: '+12125550105' },
    { status: 'open', assignedStaffId: maya.id, lastActivityAt: at(5) },
  );

  const other = await createTenant();
  const otherClient = await createClient(other.business.id, {
    name: 'Alice Other',
    email: 'alice.other@example.test',
    phoneNumber: '+12125550101',
  });
  const otherConv = await createConversation(other.business.id, otherClient.id, {
    status: 'open',
    lastChannel: 'sms',
    label: 'VIP',
    unreadCount: 3,
    flaggedCount: 1,
    lastActivityAt: at(0),
  });
  const otherLocation = await createLocation(other.business.id, { name: 'Elsewhere' });
  const otherStaff = await createStaff(other.business.id, { name: 'Other Staff' });

  return {
    t,
    downtown,
    uptown,
    westside,
    maya,
    former,
    alice,
    bob,
    carla,
    dan,
    eve,
    other: { ...other, client: otherClient, conv: otherConv, location: otherLocation, staff: otherStaff },
  };
}

describe('GET /businesses/{id}/conversations: list, order and filters', () => {
  it('lists this business’s conversations newest activity first (last_activity_at desc, then id desc)', async () => {
    const s = await seedInbox();
    const all = await get(`${s.t.base}/conversations`, s.t.key);
    expect(all.status).toBe(200);
    expect(convIds(all.body)).toEqual([s.alice.conv.id, s.bob.conv.id, s.carla.conv.id, s.dan.conv.id, s.eve.conv.id]);
    expect(all.body).toMatchObject({ total_conversations: 5, page: 1, page_size: 25, next_page: false });
    expect(all.body.conversations[0]).toMatchObject({
      client_id: s.alice.client.id,
      client_name: 'Alice Walker',
      status: 'open',
      assigned_to: s.t.owner.name,
      assigned_staff_id: s.t.owner.id,
      label: 'VIP',
      unread_messages_count: 2,
      messages_flagged_count: 1,
      last_updated_channel: 'sms',
      location_id: s.downtown.id,
    });
    expect(all.body.conversations[0].last_updated_at).toMatch(ISO_MS);

    // Same activity time: the higher id first.
    const t = await tenant();
    const when = new Date(Date.now() - HOUR);
    const tied = [];
    for (let i = 0; i < 3; i++)
      tied.push((await createConversation(t.business.id, (await createClient(t.business.id)).id, { lastActivityAt: when })).id);
    const newer = await createConversation(t.business.id, (await createClient(t.business.id)).id, { lastActivityAt: new Date() });
    const res = await get(`${t.base}/conversations`, t.key);
    expect(convIds(res.body)).toEqual([newer.id, ...[...tied].sort((a, b) => b - a)]);
  });

  it('status: repeated and comma-separated values select the same conversations; a bad value is 422', async () => {
    const s = await seedInbox();
    const repeated = await get(`${s.t.base}/conversations?status=open&status=pending`, s.t.key);
    const comma = await get(`${s.t.base}/conversations?status=open,pending`, s.t.key);
    expect(repeated.status).toBe(200);
    expect(convIds(repeated.body)).toEqual([s.alice.conv.id, s.bob.conv.id, s.eve.conv.id]);
    expect(convIds(comma.body)).toEqual(convIds(repeated.body));
    expect(repeated.body.total_conversations).toBe(3);
    expect(convIds((await get(`${s.t.base}/conversations?status=snoozed`, s.t.key)).body)).toEqual([s.carla.conv.id]);
    expect(convIds((await get(`${s.t.base}/conversations?status=resolved`, s.t.key)).body)).toEqual([s.dan.conv.id]);
    const bad = await get(`${s.t.base}/conversations?status=open,closed`, s.t.key);
    expect(bad.status).toBe(422);
    expect(locs(bad.body)[0]!.slice(0, 2)).toEqual(['query', 'status']);
  });

  it('assignment: all, mine (session’s staff, or staff_id with an API key), unassigned, assigned', async () => {
    const s = await seedInbox();
    const list = (q: string, h = s.t.key) => get(`${s.t.base}/conversations?${q}`, h);
    expect(convIds((await list('assignment=all')).body)).toHaveLength(5);
    expect(convIds((await list('assignment=mine', s.t.session)).body)).toEqual([s.alice.conv.id]);
    expect(convIds((await list(`assignment=mine&staff_id=${s.maya.id}`)).body)).toEqual([s.bob.conv.id, s.eve.conv.id]);
    expect(convIds((await list('assignment=unassigned')).body)).toEqual([s.carla.conv.id, s.dan.conv.id]);
    expect(convIds((await list('assignment=assigned')).body)).toEqual([s.alice.conv.id, s.bob.conv.id, s.eve.conv.id]);

    const missing = await list('assignment=mine');
    expect(missing.status).toBe(422);
    expect(locs(missing.body)).toEqual([['query', 'staff_id']]);
    const foreign = await list(`assignment=mine&staff_id=${s.other.staff.id}`);
    expect(foreign.status).toBe(422);
    expect(locs(foreign.body)).toEqual([['query', 'staff_id']]);
    expect((await list(`assignment=mine&staff_id=${s.other.staff.id}`, s.t.session)).status).toBe(422);
    expect((await list('assignment=everyone')).status).toBe(422);
  });

  it('channel (last_updated_channel), location_id, label', async () => {
    const s = await seedInbox();
    const list = async (q: string) => convIds((await get(`${s.t.base}/conversations?${q}`, s.t.key)).body);
    expect(await list('channel=sms')).toEqual([s.alice.conv.id, s.dan.conv.id]);
    expect(await list('channel=email')).toEqual([s.bob.conv.id]);
    expect(await list('channel=voice')).toEqual([s.carla.conv.id]);
    expect((await get(`${s.t.base}/conversations?channel=fax`, s.t.key)).status).toBe(422);

    expect(await list(`location_id=${s.downtown.id}`)).toEqual([s.alice.conv.id, s.carla.conv.id]);
    expect(await list(`location_id=${s.uptown.id}`)).toEqual([s.bob.conv.id]);
    expect(await list(`location_id=${s.westside.id}`)).toEqual([]);

    expect(await list('label=VIP')).toEqual([s.alice.conv.id, s.carla.conv.id]);
    expect(await list(`label=${encodeURIComponent('Follow up')}`)).toEqual([s.dan.conv.id]);
    expect(await list('label=nothing')).toEqual([]);
    // Combined filters narrow together.
    expect(await list(`label=VIP&status=open&channel=sms&location_id=${s.downtown.id}`)).toEqual([s.alice.conv.id]);
  });

  it('location_id of another business (or unknown) in the query is 422 with loc [query, location_id]', async () => {
    const s = await seedInbox();
    const res = await get(`${s.t.base}/conversations?location_id=${s.other.location.id}`, s.t.key);
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual([['query', 'location_id']]);
  });

  it('unread and flagged: true means count > 0, false means count = 0', async () => {
    const s = await seedInbox();
    const list = async (q: string) => convIds((await get(`${s.t.base}/conversations?${q}`, s.t.key)).body);
    expect(await list('unread=true')).toEqual([s.alice.conv.id, s.carla.conv.id]);
    expect(await list('unread=false')).toEqual([s.bob.conv.id, s.dan.conv.id, s.eve.conv.id]);
    expect(await list('flagged=true')).toEqual([s.alice.conv.id, s.dan.conv.id]);
    expect(await list('flagged=false')).toEqual([s.bob.conv.id, s.carla.conv.id, s.eve.conv.id]);
    expect(await list('unread=true&flagged=true')).toEqual([s.alice.conv.id]);
    expect((await get(`${s.t.base}/conversations?unread=maybe`, s.t.key)).status).toBe(422);
  });

  it('search: client name, phone (however typed) and email, case-insensitive, LIKE wildcards literal, this business only', async () => {
    const s = await seedInbox();
    const list = async (term: string) =>
      convIds((await get(`${s.t.base}/conversations?search=${encodeURIComponent(term)}`, s.t.key)).body);
    expect(await list('alice')).toEqual([s.alice.conv.id]);
    expect(await list('WALKER')).toEqual([s.alice.conv.id]);
    expect(await list('5550102')).toEqual([s.bob.conv.id]);
    expect(await list('+12125550103')).toEqual([s.carla.conv.id]);
    // A number however it is typed (docs/api.md#client-search): its digits, or the whole number.
    expect(await list('555-0102')).toEqual([s.bob.conv.id]);
    expect(await list('(212) 555-0102')).toEqual([s.bob.conv.id]);
    expect(await list('0105')).toEqual([s.eve.conv.id]);
    expect(await list('bob.stone@EXAMPLE')).toEqual([s.bob.conv.id]);
    expect(await list('EVE@example.test')).toEqual([s.eve.conv.id]);
    // `%` and `_` match only themselves.
    expect(await list('00%')).toEqual([s.carla.conv.id]);
    expect(await list('0% N')).toEqual([s.carla.conv.id]);
    expect(await list('A%e')).toEqual([]);
    expect(await list('n_U')).toEqual([s.dan.conv.id]);
    expect(await list('B_b')).toEqual([]);
    expect(await list('nobody-by-this-name')).toEqual([]);
    // Search combines with the other filters.
    expect(await list('example.test')).toHaveLength(5);
    expect(convIds((await get(`${s.t.base}/conversations?search=example.test&status=open`, s.t.key)).body)).toEqual([
      s.alice.conv.id,
      s.eve.conv.id,
    ]);
  });

  it('search: a term under 3 characters once trimmed is a 422 on query.search (docs/api.md#search, #limits)', async () => {
    const s = await seedInbox();
    for (const term of ['a', 'al', '  al  ', '']) {
      const res = await get(`${s.t.base}/conversations?search=${encodeURIComponent(term)}`, s.t.key);
      expect(res.status, JSON.stringify(term)).toBe(422);
      expect(res.body.detail.map((d: { loc: unknown }) => d.loc)).toEqual([['query', 'search']]);
    }
    expect(convIds((await get(`${s.t.base}/conversations?search=${encodeURIComponent('  ali  ')}`, s.t.key)).body)).toEqual([
      s.alice.conv.id,
    ]);
  });

  it('pagination: pages, totals, next_page, a page past the end is empty; bad page values are 422', async () => {
    const s = await seedInbox();
    const page = (q: string) => get(`${s.t.base}/conversations?${q}`, s.t.key);
    const p1 = await page('page_size=2');
    expect(p1.body).toMatchObject({ total_conversations: 5, page: 1, page_size: 2, next_page: true });
    expect(convIds(p1.body)).toEqual([s.alice.conv.id, s.bob.conv.id]);
    const p2 = await page('page=2&page_size=2');
    expect(convIds(p2.body)).toEqual([s.carla.conv.id, s.dan.conv.id]);
    expect(p2.body.next_page).toBe(true);
    const p3 = await page('page=3&page_size=2');
    expect(convIds(p3.body)).toEqual([s.eve.conv.id]);
    expect(p3.body).toMatchObject({ total_conversations: 5, page: 3, next_page: false });
    const past = await page('page=4&page_size=2');
    expect(past.status).toBe(200);
    expect(past.body).toMatchObject({ conversations: [], total_conversations: 5, page: 4, page_size: 2, next_page: false });
    const exact = await page('page=1&page_size=5');
    expect(exact.body.next_page).toBe(false);
    // The total counts the filter, not the business.
    expect((await page('status=open&page_size=1')).body).toMatchObject({ total_conversations: 2, next_page: true });
    expect((await page('page_size=100')).status).toBe(200);
    for (const q of ['page=0', 'page=-1', 'page=x', 'page_size=0', 'page_size=101']) {
      const res = await page(q);
      expect(res.status, q).toBe(422);
      expect(locs(res.body)[0]![0], q).toBe('query');
    }
  });
});

describe('GET /businesses/{id}/conversations/filters', () => {
  it('lists every status, assignment and channel value and every location with zero counts; mine only with a known staff member', async () => {
    const t = await tenant();
    const loc = await createLocation(t.business.id, { name: 'Only Site' });
    const res = await get(`${t.base}/conversations/filters`, t.key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      statuses: [
        { value: 'open', count: 0 },
        { value: 'pending', count: 0 },
        { value: 'snoozed', count: 0 },
        { value: 'resolved', count: 0 },
      ],
      assignments: [
        { value: 'all', count: 0 },
        { value: 'unassigned', count: 0 },
        { value: 'assigned', count: 0 },
      ],
      channels: [
        { value: 'sms', count: 0 },
        { value: 'email', count: 0 },
        { value: 'voice', count: 0 },
      ],
      labels: [],
      locations: [{ location_id: loc.id, name: 'Only Site', count: 0 }],
      unread: 0,
      flagged: 0,
      possible_opt_out: 0,
    });
    const withSession = await get(`${t.base}/conversations/filters`, t.session);
    expect(withSession.body.assignments.map((a: { value: string }) => a.value)).toEqual([
      'all',
      'mine',
      'unassigned',
      'assigned',
    ]);
    const withStaffId = await get(`${t.base}/conversations/filters?staff_id=${t.owner.id}`, t.key);
    expect(withStaffId.body.assignments).toContainEqual({ value: 'mine', count: 0 });
  });

  it('counts the business’s conversations and each count equals the list’s total_conversations for the same filter', async () => {
    const s = await seedInbox();
    const session = await get(`${s.t.base}/conversations/filters`, s.t.session);
    expect(session.status).toBe(200);
    expect(session.body.statuses).toEqual([
      { value: 'open', count: 2 },
      { value: 'pending', count: 1 },
      { value: 'snoozed', count: 1 },
      { value: 'resolved', count: 1 },
    ]);
    expect(session.body.assignments).toEqual([
      { value: 'all', count: 5 },
      { value: 'mine', count: 1 },
      { value: 'unassigned', count: 2 },
      { value: 'assigned', count: 3 },
    ]);
    expect(session.body.channels).toEqual([
      { value: 'sms', count: 2 },
      { value: 'email', count: 1 },
      { value: 'voice', count: 1 },
    ]);
    expect(session.body.labels).toEqual([
      { value: 'VIP', count: 2 },
      { value: 'Follow up', count: 1 },
    ]);
    expect(session.body.locations).toEqual([
      { location_id: s.downtown.id, name: 'Downtown', count: 2 },
      { location_id: s.uptown.id, name: 'Uptown', count: 1 },
      { location_id: s.westside.id, name: 'Westside', count: 0 },
    ]);

    // alice and carla have unread messages, alice and dan flagged ones; none has a possible opt-out.
    expect({
      unread: session.body.unread,
      flagged: session.body.flagged,
      possible_opt_out: session.body.possible_opt_out,
    }).toEqual({ unread: 2, flagged: 2, possible_opt_out: 0 });

    const keyWithStaff = await get(`${s.t.base}/conversations/filters?staff_id=${s.maya.id}`, s.t.key);
    expect(keyWithStaff.body.assignments).toContainEqual({ value: 'mine', count: 2 });

    // The counts mean exactly what the list filters mean.
    const check = async (filters: typeof session.body, headers: Headers, staffQuery: string) => {
      const total = async (q: string) =>
        (await get(`${s.t.base}/conversations?${q}${staffQuery}`, headers)).body.total_conversations;
      for (const { value, count } of filters.statuses) expect(await total(`status=${value}`), `status=${value}`).toBe(count);
      for (const { value, count } of filters.assignments)
        expect(await total(`assignment=${value}`), `assignment=${value}`).toBe(count);
      for (const { value, count } of filters.channels) expect(await total(`channel=${value}`), `channel=${value}`).toBe(count);
      for (const { value, count } of filters.labels)
        expect(await total(`label=${encodeURIComponent(value)}`), `label=${value}`).toBe(count);
      for (const { location_id, count } of filters.locations)
        expect(await total(`location_id=${location_id}`), `location_id=${location_id}`).toBe(count);
      for (const flag of ['unread', 'flagged', 'possible_opt_out'] as const)
        expect(await total(`${flag}=true`), `${flag}=true`).toBe(filters[flag]);
    };
    await check(session.body, s.t.session, '');
    await check(keyWithStaff.body, s.t.key, `&staff_id=${s.maya.id}`);

    const foreign = await get(`${s.t.base}/conversations/filters?staff_id=${s.other.staff.id}`, s.t.key);
    expect(foreign.status).toBe(422);
    expect(locs(foreign.body)).toEqual([['query', 'staff_id']]);
  });

  it('writes each listed conversation exactly as its client details answer it (JSON built by the database)', async () => {
    // The list's page is JSON text from PostgreSQL; the client details are rows serialised in Node.
    // Timestamps with microseconds, a snoozed conversation, opt-outs and nulls must read the same.
    const s = await seedInbox();
    const optedOut = await createClient(s.t.business.id, {
      name: 'Olga "Quotes" \\ Ñandú',
      optedOutSms: true,
      optedOutEmail: true,
    });
    await createConversation(s.t.business.id, optedOut.id, { status: 'open', lastMessageContent: 'line\nbreak\t"quoted" 😀' });
    await db.execute(sql`update conversations set last_activity_at = last_activity_at + interval '0.123456 second',
      snoozed_until = case when snoozed_until is null then null else snoozed_until + interval '0.000999 second' end
      where business_id = ${s.t.business.id}`);
    const list = await get(`${s.t.base}/conversations?page_size=100`, s.t.key);
    expect(list.status).toBe(200);
    expect(list.body.conversations).toHaveLength(6);
    for (const listed of list.body.conversations as { client_id: number }[]) {
      const details = await get(`${s.t.base}/clients/${listed.client_id}`, s.t.key);
      expect(details.status).toBe(200);
      // Same keys in the same order, same values.
      expect(JSON.stringify(listed)).toBe(JSON.stringify(details.body));
    }
    const olga = (list.body.conversations as { client_id: number }[]).find((c) => c.client_id === optedOut.id);
    expect(olga).toMatchObject({ opted_out_sms: true, opted_out_email: true, client_name: 'Olga "Quotes" \\ Ñandú' });
    expect((list.body.conversations as { last_updated_at: string }[])[0]!.last_updated_at).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
    );
  });

  it('answers a total that is the number of conversations its pages hold, whether kept or counted', async () => {
    // One filtered dimension reads the kept counts; several, or a search, count the rows: either way
    // the total is what paging through the list finds.
    const s = await seedInbox();
    const staff = `&staff_id=${s.maya.id}`;
    const queries = [
      '',
      'status=open&status=snoozed',
      'status=open&status=open',
      `assignment=mine${staff}`,
      'assignment=assigned',
      'assignment=unassigned',
      'channel=email',
      `location_id=${s.uptown.id}`,
      'label=VIP',
      'unread=true',
      'unread=false',
      'flagged=false',
      'possible_opt_out=false',
      'status=open&assignment=unassigned',
      'status=open&unread=true',
      'label=VIP&channel=sms',
      'search=example.test',
      'search=walker&status=open',
    ];
    for (const q of queries) {
      const seen: number[] = [];
      let total: number | undefined;
      for (let page = 1; page < 10; page++) {
        const res = await get(`${s.t.base}/conversations?${q}&page_size=2&page=${page}`, s.t.key);
        expect(res.status, q).toBe(200);
        total ??= res.body.total_conversations as number;
        expect(res.body.total_conversations, `${q} page ${page}`).toBe(total);
        seen.push(...(res.body.conversations as { conversation_id: number }[]).map((c) => c.conversation_id));
        if (!res.body.next_page) break;
      }
      expect(new Set(seen).size, q).toBe(seen.length);
      expect(total, q).toBe(seen.length);
    }
    // Not vacuous: the filters above split the business's five conversations differently.
    const totals = await Promise.all(
      ['unread=true', 'unread=false', 'assignment=assigned', 'status=snoozed&assignment=unassigned'].map(
        async (q) => (await get(`${s.t.base}/conversations?${q}`, s.t.key)).body.total_conversations,
      ),
    );
    expect(totals).toEqual([2, 3, 3, 1]);
  });
});

describe('POST /businesses/{id}/conversations: create or retrieve', () => {
  it('creates the client’s conversation once and returns the same one afterwards', async () => {
    const t = await tenant();
    const loc = await createLocation(t.business.id);
    const client = await createClient(t.business.id, { name: 'Nina Park', locationId: loc.id });
    const first = await post(`${t.base}/conversations`, t.key, { client_id: client.id });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      client_id: client.id,
      client_name: 'Nina Park',
      conversation_id: expect.any(Number),
      status: 'open',
      unread_messages_count: 0,
      messages_flagged_count: 0,
      assigned_to: null,
      label: null,
      location_id: loc.id,
    });
    const second = await post(`${t.base}/conversations`, t.session, { client_id: client.id });
    expect(second.status).toBe(200);
    expect(second.body.conversation_id).toBe(first.body.conversation_id);
    const rows = await db.select().from(conversations).where(eq(conversations.clientId, client.id));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.locationId).toBe(loc.id);

    // An existing conversation (made by a message) is returned as it is.
    const withHistory = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, withHistory.id, { status: 'pending', label: 'Color' });
    expect((await post(`${t.base}/conversations`, t.key, { client_id: withHistory.id })).body).toMatchObject({
      conversation_id: conv.id,
      status: 'pending',
      label: 'Color',
    });
  });

  it('an unknown client or another business’s client is 422 at [body, client_id]; nothing is created', async () => {
    const t = await tenant();
    const other = await createTenant();
    const theirs = await createClient(other.business.id);
    for (const clientId of [987654321, theirs.id]) {
      const res = await post(`${t.base}/conversations`, t.key, { client_id: clientId });
      expect(res.status).toBe(422);
      expect(locs(res.body)).toEqual([['body', 'client_id']]);
    }
    expect(await db.select().from(conversations).where(eq(conversations.clientId, theirs.id))).toHaveLength(0);
    expect((await post(`${t.base}/conversations`, t.key, {})).status).toBe(422);
    expect((await post(`${t.base}/conversations`, t.key, { client_id: 'abc' })).status).toBe(422);
  });
});

describe('POST /conversations/{id}/assign', () => {
  it('assigns an active staff member of the business (assigned_to shows the name), null unassigns', async () => {
    const t = await tenant();
    const maya = await createStaff(t.business.id, { name: 'Maya Chen', gender: 'female' });
    const conv = await createConversation(t.business.id, (await createClient(t.business.id)).id, {
      lastActivityAt: new Date(Date.now() - HOUR),
    });
    const res = await post(`${t.base}/conversations/${conv.id}/assign`, t.session, { staff_id: maya.id });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      conversation_id: conv.id,
      assigned_to: 'Maya Chen',
      assigned_staff_id: maya.id,
      staff_name: 'Maya Chen',
      staff_gender: 'female',
      updated_by: t.owner.name,
    });
    // An assignment change is activity (docs/api.md#conversations, Activity).
    expect(new Date(res.body.last_updated_at).getTime()).toBeGreaterThan(Date.now() - 60_000);
    const [row] = await db.select().from(conversations).where(eq(conversations.id, conv.id));
    expect(row!.assignedStaffId).toBe(maya.id);

    const unassigned = await post(`${t.base}/conversations/${conv.id}/assign`, t.key, { staff_id: null });
    expect(unassigned.status).toBe(200);
    expect(unassigned.body).toMatchObject({ assigned_to: null, assigned_staff_id: null, staff_name: null });
    expect((await get(`${t.base}/conversations?assignment=unassigned`, t.key)).body.total_conversations).toBe(1);
  });

  it('an inactive staff member or another business’s is 422 at [body, staff_id] and changes nothing', async () => {
    const t = await tenant();
    const other = await createTenant();
    const inactive = await createStaff(t.business.id, { active: false });
    const conv = await createConversation(t.business.id, (await createClient(t.business.id)).id, { assignedStaffId: t.owner.id });
    for (const staffId of [inactive.id, other.owner.id, 99999999]) {
      const res = await post(`${t.base}/conversations/${conv.id}/assign`, t.key, { staff_id: staffId });
      expect(res.status, String(staffId)).toBe(422);
      expect(locs(res.body)).toEqual([['body', 'staff_id']]);
    }
    const [row] = await db.select().from(conversations).where(eq(conversations.id, conv.id));
    expect(row!.assignedStaffId).toBe(t.owner.id);
    expect((await post(`${t.base}/conversations/${conv.id}/assign`, t.key, {})).status).toBe(422);
  });

  it('a conversation the caller already loaded (the inbox) is used as it is, but only for its own business', async () => {
    const t = await createTenant();
    const other = await createTenant();
    const conv = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const loaded = await loadConversation(t.business.id, conv.id);
    expect(await assignConversation(t.business.id, loaded, t.owner.id, null)).toMatchObject({ assigned_staff_id: t.owner.id });
    await expect(assignConversation(other.business.id, loaded, null, null)).rejects.toMatchObject({ code: 'not_found' });
    const [row] = await db.select().from(conversations).where(eq(conversations.id, conv.id));
    expect(row!.assignedStaffId).toBe(t.owner.id);
  });
});

describe('POST /conversations/{id}/status', () => {
  it('snoozed needs a future snoozed_until (missing or past → 422); any status can move to any other', async () => {
    const t = await tenant();
    const conv = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const path = `${t.base}/conversations/${conv.id}/status`;
    const missing = await post(path, t.key, { status: 'snoozed' });
    expect(missing.status).toBe(422);
    expect(locs(missing.body)).toEqual([['body', 'snoozed_until']]);
    const past = await post(path, t.key, { status: 'snoozed', snoozed_until: new Date(Date.now() - 60_000).toISOString() });
    expect(past.status).toBe(422);
    expect(locs(past.body)).toEqual([['body', 'snoozed_until']]);
    expect((await post(path, t.key, { status: 'closed' })).status).toBe(422);

    const until = new Date(Date.now() + 2 * HOUR);
    const snoozed = await post(path, t.key, { status: 'snoozed', snoozed_until: until.toISOString() });
    expect(snoozed.status).toBe(200);
    expect(snoozed.body).toMatchObject({ status: 'snoozed', snoozed_until: until.toISOString() });
    // An offset is honoured.
    const offset = await post(path, t.key, { status: 'snoozed', snoozed_until: '2999-01-01T10:00:00+02:00' });
    expect(offset.body.snoozed_until).toBe('2999-01-01T08:00:00.000Z');

    for (const status of ['pending', 'resolved', 'snoozed', 'open', 'resolved', 'pending', 'open'] as const) {
      const body = status === 'snoozed' ? { status, snoozed_until: until.toISOString() } : { status };
      const res = await post(path, t.key, body);
      expect(res.status, status).toBe(200);
      expect(res.body.status).toBe(status);
      if (status !== 'snoozed') expect(res.body.snoozed_until).toBeNull();
    }
  });

  it('resolved records resolved_by: the session’s staff, or the body staff_id of an API key; another business’s staff_id is 422', async () => {
    const t = await tenant();
    const maya = await createStaff(t.business.id, { name: 'Maya Chen' });
    const other = await createTenant();
    const conv = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const path = `${t.base}/conversations/${conv.id}/status`;

    const bySession = await post(path, t.session, { status: 'resolved' });
    expect(bySession.status).toBe(200);
    expect(bySession.body).toMatchObject({ status: 'resolved', resolved_by: t.owner.name, updated_by: t.owner.name });
    const [row] = await db.select().from(conversations).where(eq(conversations.id, conv.id));
    expect(row!.resolvedByStaffId).toBe(t.owner.id);

    const reopened = await post(path, t.session, { status: 'open' });
    expect(reopened.body).toMatchObject({ status: 'open', resolved_by: null });

    const byBody = await post(path, t.key, { status: 'resolved', staff_id: maya.id });
    expect(byBody.body).toMatchObject({ status: 'resolved', resolved_by: 'Maya Chen', updated_by: 'Maya Chen' });
    // A session acts as itself (docs/api.md#staff-sessions): naming a colleague is a 422, itself is fine.
    await post(path, t.session, { status: 'open' });
    const asMaya = await post(path, t.session, { status: 'resolved', staff_id: maya.id });
    expect(asMaya.status).toBe(422);
    expect(locs(asMaya.body)).toEqual([['body', 'staff_id']]);
    expect((await post(path, t.session, { status: 'resolved', staff_id: t.owner.id })).body.resolved_by).toBe(t.owner.name);

    const foreign = await post(path, t.key, { status: 'resolved', staff_id: other.owner.id });
    expect(foreign.status).toBe(422);
    expect(locs(foreign.body)).toEqual([['body', 'staff_id']]);
  });

  it('an inbound SMS (record endpoint) reopens a resolved and a snoozed conversation; an inbound to an open one keeps it open', async () => {
    const t = await tenant();
    await createSmsNumber(t.business.id);
    const resolvedClient = await createClient(t.business.id);
    const snoozedClient = await createClient(t.business.id);
    const resolved = (await post(`${t.base}/conversations`, t.key, { client_id: resolvedClient.id })).body;
    const snoozed = (await post(`${t.base}/conversations`, t.key, { client_id: snoozedClient.id })).body;
    expect(
      (await post(`${t.base}/conversations/${resolved.conversation_id}/status`, t.session, { status: 'resolved' })).body,
    ).toMatchObject({
      status: 'resolved',
      resolved_by: t.owner.name,
    });
    const until = new Date(Date.now() + 24 * HOUR).toISOString();
    expect(
      (
        await post(`${t.base}/conversations/${snoozed.conversation_id}/status`, t.key, {
          status: 'snoozed',
          snoozed_until: until,
        })
      ).body.status,
    ).toBe('snoozed');

    await recordInbound(t, resolvedClient.id, 'Actually, one more question');
    await recordInbound(t, snoozedClient.id, 'Can I come earlier?');
    const afterResolved = (await get(`${t.base}/clients/${resolvedClient.id}`, t.key)).body;
    const afterSnoozed = (await get(`${t.base}/clients/${snoozedClient.id}`, t.key)).body;
    // Reopened: nobody resolved it any more (resolved_by cleared with the status).
    expect(afterResolved).toMatchObject({
      status: 'open',
      resolved_by: null,
      unread_messages_count: 1,
      last_message_content: 'Actually, one more question',
    });
    expect(afterSnoozed).toMatchObject({ status: 'open', snoozed_until: null, unread_messages_count: 1 });

    // Pending is not reopened by an inbound message (only resolved and snoozed are, docs/api.md#conversation-statuses).
    await post(`${t.base}/conversations/${resolved.conversation_id}/status`, t.key, { status: 'pending' });
    await recordInbound(t, resolvedClient.id, 'Hello?');
    expect((await get(`${t.base}/clients/${resolvedClient.id}`, t.key)).body.status).toBe('pending');
  });

  it('wakeSnoozedConversations() reopens a conversation whose snoozed_until passed and leaves future ones snoozed', async () => {
    const t = await tenant();
    const due = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const later = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const until = new Date(Date.now() + HOUR).toISOString();
    for (const c of [due, later]) {
      expect(
        (await post(`${t.base}/conversations/${c.id}/status`, t.key, { status: 'snoozed', snoozed_until: until })).status,
      ).toBe(200);
    }
    await db
      .update(conversations)
      .set({ snoozedUntil: new Date(Date.now() - 1000) })
      .where(eq(conversations.id, due.id));

    const woken = await wakeSnoozedConversations();
    expect(woken).toBeGreaterThanOrEqual(1);
    const [dueRow] = await db.select().from(conversations).where(eq(conversations.id, due.id));
    const [laterRow] = await db.select().from(conversations).where(eq(conversations.id, later.id));
    expect(dueRow).toMatchObject({ status: 'open', snoozedUntil: null });
    expect(laterRow!.status).toBe('snoozed');
    expect(laterRow!.snoozedUntil!.toISOString()).toBe(until);
    // Running it again wakes nothing new here.
    await wakeSnoozedConversations();
    expect((await db.select().from(conversations).where(eq(conversations.id, later.id)))[0]!.status).toBe('snoozed');
  });
});

describe('POST /conversations/{id}/label', () => {
  it('sets and clears a label of 1–50 characters; 51 characters or empty is 422', async () => {
    const t = await tenant();
    const conv = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const path = `${t.base}/conversations/${conv.id}/label`;
    const set = await post(path, t.key, { label: 'Balayage' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ conversation_id: conv.id, label: 'Balayage' });
    expect((await get(`${t.base}/conversations/filters`, t.key)).body.labels).toEqual([{ value: 'Balayage', count: 1 }]);
    expect(convIds((await get(`${t.base}/conversations?label=Balayage`, t.key)).body)).toEqual([conv.id]);

    const fifty = 'x'.repeat(50);
    expect((await post(path, t.key, { label: fifty })).body.label).toBe(fifty);
    for (const label of ['x'.repeat(51), '', '   ']) {
      const res = await post(path, t.key, { label });
      expect(res.status, JSON.stringify(label)).toBe(422);
      expect(locs(res.body)).toEqual([['body', 'label']]);
    }
    expect((await post(path, t.key, {})).status).toBe(422);
    const [row] = await db.select().from(conversations).where(eq(conversations.id, conv.id));
    expect(row!.label).toBe(fifty);

    const cleared = await post(path, t.key, { label: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.label).toBeNull();
    expect((await get(`${t.base}/conversations/filters`, t.key)).body.labels).toEqual([]);
  });

  it('labelling does not count as activity: last_updated_at and the list order stay the same', async () => {
    const t = await tenant();
    const old = await createConversation(t.business.id, (await createClient(t.business.id)).id, {
      lastActivityAt: new Date(Date.now() - 2 * HOUR),
    });
    const recent = await createConversation(t.business.id, (await createClient(t.business.id)).id, {
      lastActivityAt: new Date(Date.now() - HOUR),
    });
    const before = (await get(`${t.base}/clients/${old.clientId}`, t.key)).body.last_updated_at;
    const labelled = await post(`${t.base}/conversations/${old.id}/label`, t.key, { label: 'Later' });
    expect(labelled.body.last_updated_at).toBe(before);
    expect(convIds((await get(`${t.base}/conversations`, t.key)).body)).toEqual([recent.id, old.id]);
  });
});

describe('GET /businesses/{id}/clients/{client_id}: client details', () => {
  it('answers the conversation’s counts, last message, last_updated_at (ISO with ms) and channel', async () => {
    const t = await tenant();
    await createSmsNumber(t.business.id);
    const maya = await createStaff(t.business.id, { name: 'Maya Chen' });
    const client = await createClient(t.business.id, {
      name: 'Iris Moon',
      email: 'iris@example.test',
      phoneNumber: '+14155550177',
      gender: 'female',
      clientType: 'vip',
    });
    const conv = (await post(`${t.base}/conversations`, t.key, { client_id: client.id })).body;
    await post(`${t.base}/conversations/${conv.conversation_id}/assign`, t.key, { staff_id: maya.id });
    const first = await recordInbound(t, client.id, 'Hi! Do you have time Friday?');
    await recordInbound(t, client.id, 'Around 4pm would be perfect');
    const flag = await post(`${t.base}/messages/${first}/flag`, t.key, { flagged: true });
    expect(flag.status).toBe(200);

    const res = await get(`${t.base}/clients/${client.id}`, t.key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      client_id: client.id,
      conversation_id: conv.conversation_id,
      client_name: 'Iris Moon',
      client_email: 'iris@example.test',
      client_phone_number: '+14155550177',
      client_gender: 'female',
      client_type: 'vip',
      opted_out_sms: false,
      opted_out_email: false,
      status: 'open',
      unread_messages_count: 2,
      messages_flagged_count: 1,
      last_message_content: 'Around 4pm would be perfect',
      last_updated_channel: 'sms',
      assigned_to: 'Maya Chen',
      assigned_staff_id: maya.id,
      label: null,
      resolved_by: null,
    });
    expect(res.body.last_updated_at).toMatch(ISO_MS);
    const [row] = await db.select().from(conversations).where(eq(conversations.id, conv.conversation_id));
    expect(res.body.last_updated_at).toBe(row!.lastActivityAt.toISOString());
    const [newest] = await db
      .select()
      .from(messages)
      .where(eq(messages.conversationId, conv.conversation_id))
      .orderBy(sql`${messages.sentAt} desc, ${messages.id} desc`)
      .limit(1);
    expect(res.body.last_message_id).toBe(newest!.id);
    expect(new Date(res.body.last_updated_at).getTime()).toBeGreaterThanOrEqual(newest!.sentAt.getTime());

    // Same answer through the list.
    const listed = (await get(`${t.base}/conversations`, t.key)).body.conversations[0];
    expect(listed).toEqual(res.body);
  });

  it('a client without a conversation has conversation fields null; a missing or another business’s client is 200 null', async () => {
    const t = await tenant();
    const other = await createTenant();
    const lonely = await createClient(t.business.id, { name: 'No Talk' });
    const res = await get(`${t.base}/clients/${lonely.id}`, t.key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      client_id: lonely.id,
      client_name: 'No Talk',
      conversation_id: null,
      status: null,
      last_updated_at: null,
      unread_messages_count: 0,
      messages_flagged_count: 0,
    });

    const missing = await api.get(`${t.base}/clients/987654321`, { headers: t.key });
    expect(missing.status).toBe(200);
    expect(await missing.text()).toBe('null');
    const theirs = await createClient(other.business.id);
    await createConversation(other.business.id, theirs.id, { unreadCount: 4 });
    const foreign = await api.get(`${t.base}/clients/${theirs.id}`, { headers: t.key });
    expect(foreign.status).toBe(200);
    expect(await foreign.json()).toBeNull();
    expect((await get(`${t.base}/clients/abc`, t.key)).status).toBe(422);
  });
});

describe('tenancy on every conversation, message and staff path', () => {
  it('another business’s conversation, message or staff id through this business’s path is 404', async () => {
    const a = await tenant();
    const b = await createTenant();
    const theirClient = await createClient(b.business.id);
    const theirConv = await createConversation(b.business.id, theirClient.id, { status: 'open', label: 'Theirs' });
    const theirMessage = await createMessage(theirConv, { direction: 'inbound', isRead: false });
    const c = `${a.base}/conversations/${theirConv.id}`;

    for (const headers of [a.key, a.session]) {
      const attempts: [string, Promise<Response>][] = [
        ['messages', api.get(`${c}/messages`, { headers })],
        ['notes', api.post(`${c}/notes`, { headers, body: { content: 'peek' } })],
        ['assign', api.post(`${c}/assign`, { headers, body: { staff_id: null } })],
        ['status', api.post(`${c}/status`, { headers, body: { status: 'resolved' } })],
        ['label', api.post(`${c}/label`, { headers, body: { label: 'mine now' } })],
        ['flag', api.post(`${a.base}/messages/${theirMessage.id}/flag`, { headers, body: { flagged: true } })],
        ['staff', api.get(`${a.base}/staffs/${b.owner.id}`, { headers })],
      ];
      for (const [name, pending] of attempts) {
        const res = await pending;
        expect(res.status, name).toBe(404);
        expect((await res.json()).detail, name).toMatch(/not found/);
      }
    }
    // Nothing of theirs changed.
    const [row] = await db.select().from(conversations).where(eq(conversations.id, theirConv.id));
    expect(row).toMatchObject({ status: 'open', label: 'Theirs', assignedStaffId: null, flaggedCount: 0 });
    const [msg] = await db.select().from(messages).where(eq(messages.id, theirMessage.id));
    expect(msg!.flagged).toBe(false);
    expect(await db.select().from(messages).where(eq(messages.conversationId, theirConv.id))).toHaveLength(1);
    // Unknown ids are 404 too.
    expect((await api.get(`${a.base}/conversations/987654321/messages`, { headers: a.key })).status).toBe(404);
    expect((await api.post(`${a.base}/messages/987654321/flag`, { headers: a.key, body: { flagged: true } })).status).toBe(404);
  });

  it('a business key or session on another business’s path is 403', async () => {
    const a = await tenant();
    const b = await tenant();
    const bClient = await createClient(b.business.id);
    const bConv = await createConversation(b.business.id, bClient.id);
    const bMessage = await createMessage(bConv);
    const c = `${b.base}/conversations/${bConv.id}`;
    for (const headers of [a.key, a.session]) {
      const attempts: [string, Promise<Response>][] = [
        ['list', api.get(`${b.base}/conversations`, { headers })],
        ['create', api.post(`${b.base}/conversations`, { headers, body: { client_id: bClient.id } })],
        ['filters', api.get(`${b.base}/conversations/filters`, { headers })],
        ['messages', api.get(`${c}/messages`, { headers })],
        ['notes', api.post(`${c}/notes`, { headers, body: { content: 'peek' } })],
        ['assign', api.post(`${c}/assign`, { headers, body: { staff_id: null } })],
        ['status', api.post(`${c}/status`, { headers, body: { status: 'resolved' } })],
        ['label', api.post(`${c}/label`, { headers, body: { label: 'x' } })],
        ['read', api.post(`${b.base}/messages/read`, { headers, body: { conversation_id: bConv.id } })],
        ['flag', api.post(`${b.base}/messages/${bMessage.id}/flag`, { headers, body: { flagged: true } })],
        ['client', api.get(`${b.base}/clients/${bClient.id}`, { headers })],
        ['clients', api.get(`${b.base}/clients`, { headers })],
        ['staffs', api.get(`${b.base}/staffs`, { headers })],
        ['staff', api.get(`${b.base}/staffs/${b.owner.id}`, { headers })],
      ];
      for (const [name, pending] of attempts) expect((await pending).status, name).toBe(403);
    }
    // The platform key may act on both.
    const platform = { 'x-api-key': process.env.PLATFORM_API_KEY! };
    expect((await api.get(`${b.base}/conversations`, { headers: platform })).status).toBe(200);
    expect((await api.get(`/api/v1/businesses/987654321/conversations`, { headers: platform })).status).toBe(404);
    expect((await api.get(`${b.base}/conversations`)).status).toBe(401);
  });
});

describe('touchConversations', () => {
  it('plans its update as one index probe per conversation whatever the number of them, not a join of two lists', async () => {
    // A generic plan counts an array parameter as ~10 elements; a join of two such lists was
    // planned as a nested loop, 1,000 × 1,000 rows for a bulk request.
    const plan = await genericPlan(touchStatement(new Map([1, 2, 3].map((id) => [id, { unread: 0, inbound: 0, waiting: 0 }]))));
    if (plan === null) return; // PostgreSQL 15: no EXPLAIN (GENERIC_PLAN)
    expect(plan).toMatch(/messages_conversation_sent_idx/);
    expect(plan).not.toMatch(/Join Filter/);
    expect(plan.match(/Function Scan/g)).toHaveLength(1);
  });
});

describe('ensureConversations: one conversation per client', () => {
  it('finds existing ones, creates the rest, and agrees with a concurrent writer creating the same ones', async () => {
    const business = await createBusiness();
    const existing = await createClient(business.id);
    const existingConversation = await createConversation(business.id, existing.id);
    const fresh = await Promise.all(Array.from({ length: 20 }, () => createClient(business.id)));
    const ids = [existing.id, ...fresh.map((c) => c.id)];
    // Two transactions race for the same new clients: the first holds its new rows uncommitted
    // while the second looks, so the second's insert waits on them, then reads them.
    let firstCreated!: () => void;
    const created = new Promise<void>((resolve) => (firstCreated = resolve));
    const [a, b] = await Promise.all([
      db.transaction(async (tx) => {
        const map = await ensureConversations(business.id, ids, tx);
        firstCreated();
        await new Promise((r) => setTimeout(r, 300));
        return map;
      }),
      created.then(() => db.transaction((tx) => ensureConversations(business.id, [...ids].reverse(), tx))),
    ]);
    expect(a.get(existing.id)).toBe(existingConversation.id);
    expect([...a.entries()].sort()).toEqual([...b.entries()].sort());
    expect(a.size).toBe(ids.length);
    const rows = await db.select().from(conversations).where(eq(conversations.businessId, business.id));
    expect(rows).toHaveLength(ids.length);
    expect(new Map(rows.map((r) => [r.clientId, r.id]))).toEqual(a);
  });
});
