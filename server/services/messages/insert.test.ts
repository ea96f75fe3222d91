import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { conversations, messages } from '@/db/schema';
import { createClient, createConversation, createLocation, createMessage, createTenant } from '@/server/testing/factories';
import { keptCountDifferences } from '@/server/testing/kept-counts';
import { countsAsUnread, fileMessages, insertMessages } from './insert';
import { waitingEffect } from '@/server/services/conversations/waiting';

type NewRow = Parameters<typeof fileMessages>[1][number];

const row = (businessId: number, clientId: number, overrides: Partial<NewRow> = {}): NewRow => ({
  businessId,
  clientId,
  channel: 'sms',
  direction: 'outbound',
  messageType: 'TEXT',
  senderType: 'system',
  content: 'Your appointment is confirmed',
  status: 'queued',
  origin: 'send',
  sentAt: new Date(),
  ...overrides,
});

/** What touchConversations would set, recomputed from the messages (never read back from the conversation). */
async function recomputed(conversationId: number) {
  const [r] = await db.execute<{
    last_message_id: number;
    last_message_content: string | null;
    last_channel: string | null;
    unread: number;
  }>(sql`
    select (select id from messages where conversation_id = ${conversationId} order by sent_at desc, id desc limit 1) as last_message_id,
           (select content from messages where conversation_id = ${conversationId} order by sent_at desc, id desc limit 1) as last_message_content,
           (select channel from messages where conversation_id = ${conversationId} and channel is not null order by sent_at desc, id desc limit 1) as last_channel,
           (select count(*)::int from messages where conversation_id = ${conversationId}
              and direction = 'inbound' and not is_read and message_type <> 'NOTE') as unread`);
  return {
    lastMessageId: r!.last_message_id,
    lastMessageContent: r!.last_message_content,
    lastChannel: r!.last_channel,
    unreadCount: r!.unread,
  };
}

const conversationOf = async (businessId: number, clientId: number) =>
  (await db.select().from(conversations).where(eq(conversations.clientId, clientId))).find((c) => c.businessId === businessId);

describe('fileMessages: a bulk write into new and existing conversations', () => {
  it('leaves every conversation, created here or not, with its latest message, channel and unread count, and the kept counts exact', async () => {
    const t = await createTenant();
    const businessId = t.business.id;
    // One client with a conversation and history (an unread inbound text), two without any.
    const known = await createClient(businessId);
    const existing = await createConversation(businessId, known.id, { unreadCount: 1, lastChannel: 'sms' });
    await createMessage(existing, {
      direction: 'inbound',
      isRead: false,
      content: 'Earlier question',
      sentAt: new Date(Date.now() - 60_000),
    });
    const fresh = await createClient(businessId);
    const twice = await createClient(businessId);
    const before = await db.select().from(conversations).where(eq(conversations.id, existing.id));

    const now = new Date();
    const earlier = new Date(now.getTime() - 5_000);
    const inserted = await db.transaction((tx) =>
      fileMessages(
        businessId,
        [
          row(businessId, twice.id, { content: 'Second, sent later', direction: 'inbound', isRead: false, sentAt: now }),
          row(businessId, known.id, { content: 'Reminder for the known client', sentAt: now }),
          row(businessId, fresh.id, { content: 'Welcome!', channel: 'email', messageType: 'EMAIL', sentAt: now }),
          // Listed after, sent before: the latest message goes by sent_at first, as touchConversations orders.
          row(businessId, twice.id, { content: 'First, sent earlier', direction: 'inbound', isRead: false, sentAt: earlier }),
        ],
        tx,
      ),
    );

    expect(inserted.map((m) => m.id)).toEqual([...inserted.map((m) => m.id)].sort((a, b) => a - b));
    const stored = await db.select().from(messages).where(eq(messages.businessId, businessId));
    const contentOf = new Map(stored.map((m) => [m.id, m.content]));
    // What it answers (from the rows given: the insert returns nothing) is what was stored.
    const storedById = new Map(stored.map((m) => [m.id, m]));
    expect(inserted).toEqual(
      inserted.map(({ id }) => {
        const m = storedById.get(id)!;
        return {
          id,
          conversationId: m.conversationId,
          status: m.status,
          direction: m.direction,
          unread: countsAsUnread(m),
          waiting: waitingEffect(m),
        };
      }),
    );
    expect(inserted.filter((m) => m.unread)).toHaveLength(2);
    expect(inserted.map((m) => contentOf.get(m.id))).toEqual([
      'Second, sent later',
      'Reminder for the known client',
      'Welcome!',
      'First, sent earlier',
    ]);

    for (const client of [known, fresh, twice]) {
      const c = (await conversationOf(businessId, client.id))!;
      expect(c, `client ${client.id}`).toMatchObject(await recomputed(c.id));
      expect(c.lastActivityAt.getTime()).toBeGreaterThanOrEqual(now.getTime() - 1);
      expect(c.status).toBe('open');
    }
    expect((await conversationOf(businessId, known.id))!.id).toBe(existing.id);
    expect((await conversationOf(businessId, twice.id))!.unreadCount).toBe(2);
    // A new conversation of the client's texts waits since the earliest of them (waiting.ts).
    expect((await conversationOf(businessId, twice.id))!.waitingSince).toEqual(earlier);
    expect((await conversationOf(businessId, fresh.id))!.waitingSince).toBeNull();
    expect((await conversationOf(businessId, known.id))!.unreadCount).toBe(before[0]!.unreadCount);
    expect(await keptCountDifferences(businessId)).toEqual([]);
  });

  it('a client whose conversation another writer created meanwhile gets its messages there, touched', async () => {
    const t = await createTenant();
    const businessId = t.business.id;
    const client = await createClient(businessId);
    // The other writer's transaction creates the conversation and commits while ours waits on it.
    let releaseOther!: () => void;
    const otherHolds = new Promise<void>((r) => (releaseOther = r));
    let otherCreated!: () => void;
    const created = new Promise<void>((r) => (otherCreated = r));
    const other = db.transaction(async (tx) => {
      await createConversation(businessId, client.id, {}, tx);
      otherCreated();
      await otherHolds;
    });
    await created;
    const ours = db.transaction((tx) =>
      fileMessages(businessId, [row(businessId, client.id, { direction: 'inbound', isRead: false, content: 'Raced in' })], tx),
    );
    await new Promise((r) => setTimeout(r, 100));
    releaseOther();
    await other;
    const [m] = await ours;
    const c = (await conversationOf(businessId, client.id))!;
    expect(m!.conversationId).toBe(c.id);
    expect(c).toMatchObject({ lastMessageId: m!.id, lastMessageContent: 'Raced in', unreadCount: 1 });
    expect(await keptCountDifferences(businessId)).toEqual([]);
  });
});

describe('insertMessages', () => {
  it('stores what each row says, whether a column differs between rows or not (one value bound once)', async () => {
    const t = await createTenant();
    const client = await createClient(t.business.id);
    const conversation = await createConversation(t.business.id, client.id);
    const base = { ...row(t.business.id, client.id), conversationId: conversation.id };
    const sentAt = new Date('2026-03-01T10:00:00.000Z');
    const given = [
      { ...base, content: 'one', isRead: true, quietHours: { time_zone: 'Europe/Paris', start: 480, end: 1260 }, sentAt },
      { ...base, content: 'two', isRead: false, quietHours: null, sentAt: new Date('2026-03-01T10:00:01.000Z') },
      { ...base, content: null, isRead: true, quietHours: null, sentAt },
    ];
    const inserted = await insertMessages(given, db);
    const stored = await db.select().from(messages).where(eq(messages.conversationId, conversation.id)).orderBy(messages.id);
    expect(stored.map((m) => m.id)).toEqual(inserted.map((m) => m.id));
    expect(stored.map((m) => [m.content, m.isRead, m.quietHours, m.sentAt.toISOString(), m.status, m.category])).toEqual([
      ['one', true, { time_zone: 'Europe/Paris', start: 480, end: 1260 }, '2026-03-01T10:00:00.000Z', 'queued', 'conversational'],
      ['two', false, null, '2026-03-01T10:00:01.000Z', 'queued', 'conversational'],
      [null, true, null, '2026-03-01T10:00:00.000Z', 'queued', 'conversational'],
    ]);
    // One row: every column is the same for all rows.
    const [single] = await insertMessages([{ ...base, content: 'alone', cancelOnReply: false }], db);
    const [alone] = await db.select().from(messages).where(eq(messages.id, single!.id));
    expect(alone).toMatchObject({ content: 'alone', cancelOnReply: false, clientId: client.id, direction: 'outbound' });
  });

  it('says whether each row counts as unread exactly as countsAsUnread does, for every kind of row', async () => {
    const t = await createTenant();
    const client = await createClient(t.business.id);
    const conversation = await createConversation(t.business.id, client.id);
    const kinds = (['inbound', 'outbound'] as const).flatMap((direction) =>
      [true, false].flatMap((isRead) =>
        (['TEXT', 'NOTE'] as const).map((messageType) => ({
          ...row(t.business.id, client.id),
          conversationId: conversation.id,
          direction,
          isRead,
          messageType,
          channel: messageType === 'NOTE' ? null : ('sms' as const),
        })),
      ),
    );
    const inserted = await insertMessages(kinds, db);
    expect(inserted.map((m) => m.unread)).toEqual(kinds.map(countsAsUnread));
    expect(inserted.filter((m) => m.unread)).toHaveLength(1);
  });
});

describe('deleting a business', () => {
  it('deletes its conversations, messages and their search texts (by trigger, migration 0018), staff-written and at a location included, and nothing of another business', async () => {
    const doomed = await createTenant();
    const other = await createTenant();
    const location = await createLocation(doomed.business.id);
    const client = await createClient(doomed.business.id, { locationId: location.id });
    const conversation = await createConversation(doomed.business.id, client.id, {
      locationId: location.id,
      assignedStaffId: doomed.owner.id,
    });
    await createMessage(conversation, { staffId: doomed.owner.id, content: 'Staff wrote this' });
    await createMessage(conversation, { direction: 'inbound', content: 'Client wrote this' });
    const kept = await createMessage(await createConversation(other.business.id, (await createClient(other.business.id)).id));

    await db.execute(sql`delete from businesses where id = ${doomed.business.id}`);
    const left = await db.execute<{ messages: number; texts: number; conversations: number }>(sql`
      select (select count(*)::int from messages where business_id = ${doomed.business.id}) as messages,
             (select count(*)::int from message_search where business_id = ${doomed.business.id}) as texts,
             (select count(*)::int from conversations where business_id = ${doomed.business.id}) as conversations`);
    expect(left[0]).toEqual({ messages: 0, texts: 0, conversations: 0 });
    expect(await db.select({ id: messages.id }).from(messages).where(eq(messages.id, kept.id))).toHaveLength(1);
  });
});
