import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { conversations, messages } from '@/db/schema';
import {
  createClient,
  createConversation,
  createMessage,
  createSmsNumber,
  createStaff,
  createTenant,
} from '@/server/testing/factories';
import { getJson, locs, postJson, restTenant } from '@/server/testing/http';

/**
 * A conversation's messages, notes, flags and read status through the real REST handlers
 * (docs/api.md#conversations, #counts).
 */

const HOUR = 3_600_000;

const tenant = restTenant;
type Tenant = Awaited<ReturnType<typeof tenant>>;

const get = getJson;
const post = postJson;
const msgIds = (body: { messages: { message_id: number }[] }) => body.messages.map((m) => m.message_id);

/** The conversation row's counters, as stored. */
async function counters(conversationId: number) {
  const [row] = await db.select().from(conversations).where(eq(conversations.id, conversationId));
  return row!;
}

/** Unread and flagged counted fresh from messages (the definition in docs/api.md#counts). */
async function recount(conversationId: number) {
  const [row] = await db.execute<{ unread: number; flagged: number }>(sql`
    select count(*) filter (where direction = 'inbound' and not is_read and message_type <> 'NOTE')::int as unread,
           count(*) filter (where flagged)::int as flagged
    from messages where conversation_id = ${conversationId}`);
  return row!;
}

async function details(t: Tenant, clientId: number) {
  return (await get(`${t.base}/clients/${clientId}`, t.key)).body;
}

/**
 * One conversation holding one message of every kind, each a minute apart (oldest first):
 * inbound SMS (unread), outbound SMS, inbound email (unread, flagged), outbound email, inbound call
 * (unread), outbound call, a note (flagged). Plus a message in another conversation.
 */
async function seedTimeline(t: Tenant) {
  const client = await createClient(t.business.id, { name: 'Rosa Diaz' });
  const conv = await createConversation(t.business.id, client.id, { lastActivityAt: new Date(Date.now() - 2 * HOUR) });
  const start = Date.now() - HOUR;
  const at = (i: number) => new Date(start + i * 60_000);
  const smsIn = await createMessage(conv, {
    direction: 'inbound',
    senderType: 'client',
    isRead: false,
    status: 'received',
    sentAt: at(0),
  });
  const smsOut = await createMessage(conv, { isRead: true, sentAt: at(1) });
  const emailIn = await createMessage(conv, {
    channel: 'email',
    messageType: 'EMAIL',
    direction: 'inbound',
    senderType: 'client',
    isRead: false,
    flagged: true,
    status: 'received',
    subject: 'Hi',
    sentAt: at(2),
  });
  const emailOut = await createMessage(conv, {
    channel: 'email',
    messageType: 'EMAIL',
    isRead: true,
    subject: 'Re: Hi',
    sentAt: at(3),
  });
  const callIn = await createMessage(conv, {
    channel: 'voice',
    messageType: 'CALL',
    direction: 'inbound',
    senderType: 'client',
    isRead: false,
    status: 'completed',
    content: null,
    sentAt: at(4),
  });
  const callOut = await createMessage(conv, {
    channel: 'voice',
    messageType: 'CALL',
    isRead: true,
    status: 'completed',
    content: null,
    sentAt: at(5),
  });
  const note = await createMessage(conv, {
    channel: null,
    messageType: 'NOTE',
    senderType: 'staff',
    staffId: t.owner.id,
    isRead: true,
    flagged: true,
    provider: null,
    providerMessageId: null,
    sentAt: at(6),
  });
  await db.update(conversations).set({ unreadCount: 3, flaggedCount: 2 }).where(eq(conversations.id, conv.id));
  const elsewhere = await createConversation(t.business.id, (await createClient(t.business.id)).id);
  const stranger = await createMessage(elsewhere, { direction: 'inbound', isRead: false, flagged: true });
  return { client, conv, smsIn, smsOut, emailIn, emailOut, callIn, callOut, note, elsewhere, stranger };
}

/** The seeded conversation's message ids as the timeline lists them, newest first. */
const newestFirst = (s: Awaited<ReturnType<typeof seedTimeline>>) => [
  s.note.id,
  s.callOut.id,
  s.callIn.id,
  s.emailOut.id,
  s.emailIn.id,
  s.smsOut.id,
  s.smsIn.id,
];

describe('GET /conversations/{id}/messages', () => {
  it('answers the conversation’s messages newest first (sent_at desc, then id desc) with pagination', async () => {
    const t = await tenant();
    const s = await seedTimeline(t);
    const path = `${t.base}/conversations/${s.conv.id}/messages`;
    const all = await get(path, t.key);
    expect(all.status).toBe(200);
    expect(msgIds(all.body)).toEqual(newestFirst(s));
    expect(all.body).toMatchObject({ total_messages: 7, page: 1, page_size: 25, next_page: false });
    expect(all.body.messages[0]).toMatchObject({
      message_type: 'NOTE',
      channel: null,
      conversation_id: s.conv.id,
      client_id: s.client.id,
      staff_name: t.owner.name,
      client_name: 'Rosa Diaz',
      flagged: true,
      is_read: true,
    });

    const p1 = await get(`${path}?page_size=3`, t.key);
    expect(msgIds(p1.body)).toEqual([s.note.id, s.callOut.id, s.callIn.id]);
    expect(p1.body).toMatchObject({ total_messages: 7, next_page: true });
    const p3 = await get(`${path}?page=3&page_size=3`, t.key);
    expect(msgIds(p3.body)).toEqual([s.smsIn.id]);
    expect(p3.body.next_page).toBe(false);
    const past = await get(`${path}?page=4&page_size=3`, t.key);
    expect(past.body).toMatchObject({ messages: [], total_messages: 7, next_page: false });

    // Same sent_at: the higher id first.
    const when = new Date(Date.now() - 30 * 60_000);
    const tieA = await createMessage(s.conv, { sentAt: when });
    const tieB = await createMessage(s.conv, { sentAt: when });
    const withTies = await get(`${path}?page_size=100`, t.key);
    const ids = msgIds(withTies.body);
    expect(ids.indexOf(tieB.id)).toBe(ids.indexOf(tieA.id) - 1);
  });

  it('each MessageFilterType selects its messages: all, sms, email, voice, notes, flagged, unread', async () => {
    const t = await tenant();
    const s = await seedTimeline(t);
    const filtered = async (filter: string) => {
      const res = await get(`${t.base}/conversations/${s.conv.id}/messages?filter=${filter}`, t.key);
      expect(res.status, filter).toBe(200);
      expect(res.body.total_messages, filter).toBe(res.body.messages.length);
      return msgIds(res.body);
    };
    expect(await filtered('all')).toEqual(newestFirst(s));
    expect(await filtered('sms')).toEqual([s.smsOut.id, s.smsIn.id]);
    expect(await filtered('email')).toEqual([s.emailOut.id, s.emailIn.id]);
    expect(await filtered('voice')).toEqual([s.callOut.id, s.callIn.id]);
    expect(await filtered('notes')).toEqual([s.note.id]);
    expect(await filtered('flagged')).toEqual([s.note.id, s.emailIn.id]);
    expect(await filtered('unread')).toEqual([s.callIn.id, s.emailIn.id, s.smsIn.id]);
    const bad = await get(`${t.base}/conversations/${s.conv.id}/messages?filter=starred`, t.key);
    expect(bad.status).toBe(422);
    expect(locs(bad.body)).toEqual([['query', 'filter']]);
  });

  it('an empty conversation, or a filter that matches nothing, is an empty page, not a 404', async () => {
    // Tenancy is checked inside the page's statements; only "found nothing" looks the conversation up.
    const t = await tenant();
    const quiet = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    for (const filter of ['all', 'flagged']) {
      const res = await get(`${t.base}/conversations/${quiet.id}/messages?filter=${filter}`, t.key);
      expect(res.status, filter).toBe(200);
      expect(res.body).toMatchObject({ messages: [], total_messages: 0, page: 1, next_page: false });
    }
    const s = await seedTimeline(t);
    const none = await get(`${t.base}/conversations/${s.conv.id}/messages?filter=flagged&page=2&page_size=100`, t.key);
    expect(none.body).toMatchObject({ messages: [], total_messages: 2, next_page: false });
  });
});

describe('POST /conversations/{id}/notes', () => {
  it('adds a note: newest in the timeline, updates last_message_content and last_updated_at, never unread', async () => {
    const t = await tenant();
    const s = await seedTimeline(t);
    const before = await details(t, s.client.id);
    expect(before.unread_messages_count).toBe(3);

    const res = await post(`${t.base}/conversations/${s.conv.id}/notes`, t.session, {
      content: '  Prefers Maya; allergic to PPD  ',
    });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data).toMatchObject({
      message_type: 'NOTE',
      channel: null,
      content: 'Prefers Maya; allergic to PPD',
      conversation_id: s.conv.id,
      client_id: s.client.id,
      sender_type: 'staff',
      staff_name: t.owner.name,
      is_read: true,
      flagged: false,
    });
    const noteId = res.body.data.message_id as number;

    const timeline = await get(`${t.base}/conversations/${s.conv.id}/messages`, t.key);
    expect(timeline.body.messages[0].message_id).toBe(noteId);
    expect(msgIds((await get(`${t.base}/conversations/${s.conv.id}/messages?filter=notes`, t.key)).body)).toEqual([
      noteId,
      s.note.id,
    ]);
    expect(msgIds((await get(`${t.base}/conversations/${s.conv.id}/messages?filter=unread`, t.key)).body)).not.toContain(noteId);

    const after = await details(t, s.client.id);
    expect(after).toMatchObject({
      last_message_content: 'Prefers Maya; allergic to PPD',
      last_message_id: noteId,
      unread_messages_count: 3,
    });
    expect(after.last_updated_at).toBe(res.body.data.sent_at);
    expect(new Date(after.last_updated_at).getTime()).toBeGreaterThan(new Date(before.last_updated_at).getTime());
    // A note has no channel: the last channel stays the last real one.
    expect(after.last_updated_channel).toBe(before.last_updated_channel);
    expect(await recount(s.conv.id)).toEqual({ unread: 3, flagged: 2 });

    // Marking the conversation read never touches the note; the count reaches exactly 0.
    await post(`${t.base}/messages/read`, t.key, { conversation_id: s.conv.id });
    expect((await details(t, s.client.id)).unread_messages_count).toBe(0);
    await post(`${t.base}/messages/read`, t.key, { conversation_id: s.conv.id, is_read: false });
    expect((await details(t, s.client.id)).unread_messages_count).toBe(3);
    const [stored] = await db.select().from(messages).where(eq(messages.id, noteId));
    expect(stored!.isRead).toBe(true);
  });

  it('author: the session’s staff, else an API key’s staff_id, else none; content 1–5000 characters; another business’s staff_id is 422', async () => {
    const t = await tenant();
    const maya = await createStaff(t.business.id, { name: 'Maya Chen' });
    const other = await createTenant();
    const conv = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const path = `${t.base}/conversations/${conv.id}/notes`;

    expect((await post(path, t.key, { content: 'by Maya', staff_id: maya.id })).body.data.staff_name).toBe('Maya Chen');
    expect((await post(path, t.session, { content: 'by session' })).body.data.staff_name).toBe(t.owner.name);
    // A session writes as itself (docs/api.md#staff-sessions): signing as a colleague is a 422.
    const asMaya = await post(path, t.session, { content: 'by Maya again', staff_id: maya.id });
    expect(asMaya.status).toBe(422);
    expect(locs(asMaya.body)).toEqual([['body', 'staff_id']]);
    const anonymous = await post(path, t.key, { content: 'by the platform' });
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.data.staff_name).toBeNull();

    const max = await post(path, t.key, { content: 'n'.repeat(5000) });
    expect(max.status).toBe(200);
    expect(max.body.data.content).toHaveLength(5000);
    for (const content of ['n'.repeat(5001), '', '   ']) {
      const res = await post(path, t.key, { content });
      expect(res.status, `length ${content.length}`).toBe(422);
      expect(locs(res.body)).toEqual([['body', 'content']]);
    }
    expect(locs((await post(path, t.key, {})).body)).toEqual([['body', 'content']]);

    for (const staffId of [other.owner.id, 99999999]) {
      const foreign = await post(path, t.key, { content: 'sneaky', staff_id: staffId });
      expect(foreign.status).toBe(422);
      expect(locs(foreign.body)).toEqual([['body', 'staff_id']]);
    }
    const notes = await db
      .select()
      .from(messages)
      .where(and(eq(messages.conversationId, conv.id), eq(messages.messageType, 'NOTE')));
    expect(notes).toHaveLength(4);
    expect(notes.some((n) => n.content === 'sneaky' || n.content === 'by Maya again')).toBe(false);
  });
});

describe('POST /messages/{id}/flag', () => {
  it('flag true/false moves messages_flagged_count exactly once per actual change', async () => {
    const t = await tenant();
    const client = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, client.id);
    const a = await createMessage(conv, { direction: 'inbound', isRead: false });
    const b = await createMessage(conv);
    const flag = (id: number, flagged: boolean) => post(`${t.base}/messages/${id}/flag`, t.key, { flagged });

    const first = await flag(a.id, true);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ success: true, data: { message_id: a.id, flagged: true, conversation_id: conv.id } });
    expect((await details(t, client.id)).messages_flagged_count).toBe(1);
    expect((await flag(a.id, true)).body.data.flagged).toBe(true);
    expect((await details(t, client.id)).messages_flagged_count).toBe(1);
    await flag(b.id, true);
    expect((await details(t, client.id)).messages_flagged_count).toBe(2);
    expect(msgIds((await get(`${t.base}/conversations/${conv.id}/messages?filter=flagged`, t.key)).body)).toEqual([b.id, a.id]);

    expect((await flag(a.id, false)).body.data.flagged).toBe(false);
    expect((await details(t, client.id)).messages_flagged_count).toBe(1);
    await flag(a.id, false);
    await flag(a.id, false);
    expect((await details(t, client.id)).messages_flagged_count).toBe(1);
    await flag(b.id, false);
    expect((await details(t, client.id)).messages_flagged_count).toBe(0);
    expect(await recount(conv.id)).toMatchObject({ flagged: 0 });
    expect((await counters(conv.id)).flaggedCount).toBe(0);

    // Concurrent flags of one message count once.
    await Promise.all(Array.from({ length: 8 }, () => flag(a.id, true)));
    expect((await counters(conv.id)).flaggedCount).toBe(1);

    expect((await post(`${t.base}/messages/${a.id}/flag`, t.key, {})).status).toBe(422);
    expect((await post(`${t.base}/messages/${a.id}/flag`, t.key, { flagged: 'yes' })).status).toBe(422);
    expect((await post(`${t.base}/messages/987654321/flag`, t.key, { flagged: true })).status).toBe(404);
  });
});

describe('POST /messages/read', () => {
  /** Conversation 1: four inbound unread, one outbound, one note; conversation 2 (another client): two inbound unread. */
  async function seedUnread(t: Tenant) {
    const client1 = await createClient(t.business.id);
    const conv1 = await createConversation(t.business.id, client1.id);
    const inbound = (conv: typeof conv1) =>
      createMessage(conv, { direction: 'inbound', senderType: 'client', isRead: false, status: 'received' });
    const m1 = await inbound(conv1);
    const m2 = await inbound(conv1);
    const out = await createMessage(conv1, { isRead: true });
    const m3 = await inbound(conv1);
    const note = await createMessage(conv1, {
      channel: null,
      messageType: 'NOTE',
      isRead: true,
      provider: null,
      providerMessageId: null,
    });
    const m4 = await inbound(conv1);
    const client2 = await createClient(t.business.id);
    const conv2 = await createConversation(t.business.id, client2.id);
    const n1 = await inbound(conv2);
    const n2 = await inbound(conv2);
    await db.update(conversations).set({ unreadCount: 4 }).where(eq(conversations.id, conv1.id));
    await db.update(conversations).set({ unreadCount: 2 }).where(eq(conversations.id, conv2.id));
    return { client1, conv1, client2, conv2, m1, m2, m3, m4, out, note, n1, n2 };
  }
  const read = (t: Tenant, body: unknown) => post(`${t.base}/messages/read`, t.key, body);

  it('by message_ids: marks exactly those, counts only real changes, is_read false puts them back', async () => {
    const t = await tenant();
    const s = await seedUnread(t);
    const first = await read(t, { message_ids: [s.m1.id, s.n1.id] });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ success: true, updated: 2 });
    expect((await counters(s.conv1.id)).unreadCount).toBe(3);
    expect((await counters(s.conv2.id)).unreadCount).toBe(1);
    expect((await read(t, { message_ids: [s.m1.id] })).body.updated).toBe(0);
    expect((await counters(s.conv1.id)).unreadCount).toBe(3);
    expect((await counters(s.conv1.id)).lastReadMessageId).toBe(s.m1.id);
    // Outbound messages and notes are never "read" or "unread" by these filters.
    expect((await read(t, { message_ids: [s.out.id, s.note.id], is_read: false })).body.updated).toBe(0);

    const back = await read(t, { message_ids: [s.m1.id, s.n1.id], is_read: false });
    expect(back.body.updated).toBe(2);
    expect((await counters(s.conv1.id)).unreadCount).toBe(4);
    expect((await counters(s.conv2.id)).unreadCount).toBe(2);
    expect((await read(t, { message_ids: [s.m1.id], is_read: false })).body.updated).toBe(0);
    for (const c of [s.conv1, s.conv2]) expect((await counters(c.id)).unreadCount).toBe((await recount(c.id)).unread);
  });

  it('by conversation_id, client_id and up_to_message_id; last_read_message_id is set', async () => {
    const t = await tenant();
    const s = await seedUnread(t);
    const upTo = await read(t, { conversation_id: s.conv1.id, up_to_message_id: s.m3.id });
    expect(upTo.body.updated).toBe(3);
    let c1 = await counters(s.conv1.id);
    expect(c1.unreadCount).toBe(1);
    expect(c1.lastReadMessageId).toBe(s.m3.id);
    expect((await details(t, s.client1.id)).last_read_message_id).toBe(s.m3.id);
    const [m4] = await db.select().from(messages).where(eq(messages.id, s.m4.id));
    expect(m4!.isRead).toBe(false);

    const whole = await read(t, { conversation_id: s.conv1.id });
    expect(whole.body.updated).toBe(1);
    c1 = await counters(s.conv1.id);
    expect(c1).toMatchObject({ unreadCount: 0, lastReadMessageId: s.m4.id });
    expect((await counters(s.conv2.id)).unreadCount).toBe(2);

    const byClient = await read(t, { client_id: s.client2.id });
    expect(byClient.body.updated).toBe(2);
    expect(await counters(s.conv2.id)).toMatchObject({ unreadCount: 0, lastReadMessageId: s.n2.id });

    const unreadAgain = await read(t, { conversation_id: s.conv1.id, is_read: false });
    expect(unreadAgain.body.updated).toBe(4);
    expect((await counters(s.conv1.id)).unreadCount).toBe(4);
    expect(msgIds((await get(`${t.base}/conversations/${s.conv1.id}/messages?filter=unread`, t.key)).body)).toEqual([
      s.m4.id,
      s.m3.id,
      s.m2.id,
      s.m1.id,
    ]);
    for (const c of [s.conv1, s.conv2]) expect((await counters(c.id)).unreadCount).toBe((await recount(c.id)).unread);
  });

  it('no selector is 422; a conversation_id or client_id not in this business is 422 with its loc', async () => {
    const t = await tenant();
    const s = await seedUnread(t);
    const other = await createTenant();
    const theirClient = await createClient(other.business.id);
    const theirConv = await createConversation(other.business.id, theirClient.id);
    for (const body of [{}, { is_read: true }, { is_read: false }]) {
      const res = await read(t, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.detail[0].loc[0]).toBe('body');
    }
    const conv = await read(t, { conversation_id: theirConv.id });
    expect(conv.status).toBe(422);
    expect(locs(conv.body)).toEqual([['body', 'conversation_id']]);
    const client = await read(t, { client_id: theirClient.id });
    expect(client.status).toBe(422);
    expect(locs(client.body)).toEqual([['body', 'client_id']]);
    expect((await read(t, { message_ids: [] })).status).toBe(422);
    expect((await read(t, { message_ids: ['x'] })).status).toBe(422);
    expect((await counters(s.conv1.id)).unreadCount).toBe(4);
  });

  it('message_ids of another business are 422 at [body, message_ids, i] and change nothing', async () => {
    const t = await tenant();
    const s = await seedUnread(t);
    const other = await createTenant();
    const theirConv = await createConversation(other.business.id, (await createClient(other.business.id)).id);
    const theirs = await createMessage(theirConv, { direction: 'inbound', isRead: false });
    const res = await read(t, { message_ids: [s.m1.id, theirs.id] });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual([['body', 'message_ids', 1]]);
    const [mine] = await db.select().from(messages).where(eq(messages.id, s.m1.id));
    expect(mine!.isRead).toBe(false);
  });

  it('reads through the record endpoint’s real inbound messages keep the count equal to a fresh recount', async () => {
    const t = await tenant();
    await createSmsNumber(t.business.id);
    const client = await createClient(t.business.id);
    const recorded = await post(`${t.base}/sms/record`, t.key, {
      sender_type: 'client',
      messages: [1, 2, 3].map((i) => ({ client_id: client.id, message: `inbound ${i}`, direction: 'inbound' })),
    });
    expect(recorded.status).toBe(200);
    const ids = recorded.body.message_ids as number[];
    const conv = (await details(t, client.id)).conversation_id as number;
    expect((await details(t, client.id)).unread_messages_count).toBe(3);
    await read(t, { message_ids: [ids[0]] });
    await post(`${t.base}/conversations/${conv}/notes`, t.session, { content: 'replied by phone' });
    expect((await details(t, client.id)).unread_messages_count).toBe(2);
    await read(t, { conversation_id: conv, up_to_message_id: ids[1] });
    expect(await details(t, client.id)).toMatchObject({ unread_messages_count: 1, last_read_message_id: ids[1] });
    expect((await counters(conv)).unreadCount).toBe((await recount(conv)).unread);
  });
});
