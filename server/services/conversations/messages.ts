import { and, eq, sql, type SQL } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { fixedStatement } from '@/server/db/prepared';
import { clients, messages, type MESSAGE_FILTERS } from '@/db/schema';
import { recordMentions, validateMentions } from './mentions';
import { AppError } from '@/server/errors';
import { MESSAGE_SUMMARY, messageSummary, recordEvents, type MessageSummaryRow } from '@/server/services/events/record';
import type { EventActor } from '@/server/services/events/types';
import { touchConversations } from './activity';
import { resolveConversation, type ConversationRef } from './index';
import { requireStaff } from '@/server/services/directory';
import { insertMessagesMentioning } from '@/server/services/messages/insert';
import { messageItemsJson, selectMessageItems, toMessageItem, type MessageItemOut } from '@/server/services/messages/serialize';

type MessageFilter = (typeof MESSAGE_FILTERS)[number];

/** An inbound SMS, email or call that staff has not read; notes are never unread (docs/api.md#counts). */
const UNREAD = sql`${messages.direction} = 'inbound' and not ${messages.isRead} and ${messages.messageType} <> 'NOTE'`;

function filterCondition(filter: MessageFilter): SQL | undefined {
  switch (filter) {
    case 'sms':
    case 'email':
    case 'voice':
      return eq(messages.channel, filter);
    case 'notes':
      return eq(messages.messageType, 'NOTE');
    case 'flagged':
      return eq(messages.flagged, true);
    case 'unread':
      return UNREAD;
    default:
      return undefined;
  }
}

/**
 * The page (as JSON text, messageItemsJson) and the count of a conversation's messages under one
 * filter, in one statement rendered once per filter (server/db/prepared.ts). The conversation is named
 * through `conversations` with its business (an init plan, evaluated once), so tenancy costs no
 * round trip of its own and the count stays an index-only scan. `nulls last` matches
 * messages_conversation_sent_idx, so the page is an index walk.
 */
const messagesPageStatement = fixedStatement<{ businessId: number; conversationId: number; limit: number; offset: number }>(
  (p, filter) => {
    const where = and(
      eq(
        messages.conversationId,
        sql`(select c.id from conversations c where c.business_id = ${p.businessId} and c.id = ${p.conversationId})`,
      ),
      filterCondition(filter as MessageFilter),
    );
    return sql`select
      (select count(*)::int from ${messages} where ${where}) as total,
      ${messageItemsJson(sql`select ${messages.id}, ${messages.sentAt} from ${messages} where ${where}
        order by ${messages.sentAt} desc nulls last, ${messages.id} desc nulls last limit ${p.limit} offset ${p.offset}`)} as items`;
  },
);

async function messagesPage(
  businessId: number,
  conversation: ConversationRef,
  filter: MessageFilter,
  page: number,
  pageSize: number,
  tx: Tx = db,
): Promise<{ items: string; total: number }> {
  // Tenancy: a conversation given by the caller is checked here; one named by id is looked up with
  // its business inside the statement, which then finds nothing when it is not this business's.
  const conversationId =
    typeof conversation === 'number' ? conversation : (await resolveConversation(businessId, conversation, tx)).id;
  const [row] = await messagesPageStatement<{ items: string; total: number }>(
    { businessId, conversationId, limit: pageSize, offset: (page - 1) * pageSize },
    filter,
    tx,
  );
  // Nothing under this filter: an empty page of an existing conversation, or no such conversation (404).
  if (row!.total === 0) await resolveConversation(businessId, conversationId, tx);
  return row!;
}

/** GET /conversations/{id}/messages as JSON text (the REST answer): newest first, filtered by MessageFilterType, page-based. */
export async function conversationMessagesJson(
  businessId: number,
  conversation: ConversationRef,
  filter: MessageFilter,
  page: number,
  pageSize: number,
  tx: Tx = db,
): Promise<string> {
  const { items, total } = await messagesPage(businessId, conversation, filter, page, pageSize, tx);
  return `{"messages":${items},"total_messages":${total},"page":${page},"page_size":${pageSize},"next_page":${page * pageSize < total}}`;
}

/** The same page as objects (the inbox's tRPC procedure). */
export async function conversationMessages(
  businessId: number,
  conversation: ConversationRef,
  filter: MessageFilter,
  page: number,
  pageSize: number,
  tx: Tx = db,
): Promise<{ messages: MessageItemOut[]; total_messages: number; page: number; page_size: number; next_page: boolean }> {
  return JSON.parse(await conversationMessagesJson(businessId, conversation, filter, page, pageSize, tx));
}

/** POST /notes: an internal note by a staff member of the business (or no author with an API key). */
export async function addNote(
  businessId: number,
  ref: ConversationRef,
  content: string,
  staffId: number | null,
  mentions: readonly number[] = [],
  tx: Tx = db,
) {
  const conversation = await resolveConversation(businessId, ref, tx);
  if (staffId !== null) await requireStaff(businessId, staffId, ['body', 'staff_id'], tx);
  const mentioned = await validateMentions(businessId, mentions, ['body', 'mentions'], tx);
  const id = await tx.transaction((tx) => insertNote(conversation, content, staffId, mentioned, tx));
  const [item] = await selectMessageItems(tx).where(eq(messages.id, id));
  return { success: true, data: toMessageItem(item!) };
}

/**
 * A note in the conversation's timeline, in the caller's transaction: the conversation's last
 * message and activity move (touchConversations) and the inbox hears of it. `mentions`: the staff
 * it @mentions, already validated (validateMentions), stored as rows and named by its event. Its id.
 */
export async function insertNote(
  conversation: { id: number; businessId: number; clientId: number },
  content: string,
  staffId: number | null,
  mentions: readonly number[],
  tx: Tx,
): Promise<number> {
  const { businessId } = conversation;
  const [row] = await insertMessagesMentioning(
    [
      {
        businessId,
        conversationId: conversation.id,
        clientId: conversation.clientId,
        channel: null,
        direction: 'outbound',
        messageType: 'NOTE',
        senderType: 'staff',
        senderId: staffId,
        staffId,
        content,
        status: 'sent',
        origin: 'system',
        isRead: true,
        sentAt: new Date(),
      },
    ],
    mentions,
    tx,
  );
  await recordMentions({ businessId, conversationId: conversation.id, messageId: row!.id }, mentions, tx);
  await touchConversations([row!], tx);
  return row!.id;
}

/**
 * POST /messages/read: marks inbound messages read (or unread) by selectors. Only rows whose flag
 * actually changes are counted, and each conversation's unread_count moves by exactly that number
 * in the same transaction, so concurrent readers and writers keep it exact.
 */
export async function markMessagesRead(
  businessId: number,
  filters: { conversation_id?: number; client_id?: number; message_ids?: number[]; up_to_message_id?: number; is_read: boolean },
  actor: EventActor,
  tx: Tx = db,
) {
  if (filters.conversation_id !== undefined) {
    const [c] = await tx.execute(
      sql`select 1 from conversations where business_id = ${businessId} and id = ${filters.conversation_id}`,
    );
    if (!c)
      throw AppError.invalid(['body', 'conversation_id'], `Conversation ${filters.conversation_id} not found in this business`);
  }
  if (filters.client_id !== undefined) {
    const [c] = await tx
      .select({ id: clients.id })
      .from(clients)
      .where(and(eq(clients.businessId, businessId), eq(clients.id, filters.client_id)));
    if (!c) throw AppError.invalid(['body', 'client_id'], `Client ${filters.client_id} not found in this business`);
  }
  if (filters.message_ids || filters.up_to_message_id !== undefined) {
    const ids = [...(filters.message_ids ?? []), ...(filters.up_to_message_id !== undefined ? [filters.up_to_message_id] : [])];
    const found = await tx.execute<{ id: number }>(
      sql`select id from messages where business_id = ${businessId} and id = any(${sql.param(ids)}::bigint[])`,
    );
    const known = new Set(found.map((r) => r.id));
    const issues = (filters.message_ids ?? []).flatMap((mid, i) =>
      known.has(mid)
        ? []
        : [
            {
              loc: ['body', 'message_ids', i] as ['body', string, number],
              msg: `Message ${mid} not found in this business`,
              type: 'value_error',
            },
          ],
    );
    if (filters.up_to_message_id !== undefined && !known.has(filters.up_to_message_id)) {
      issues.push({
        loc: ['body', 'up_to_message_id'] as never,
        msg: `Message ${filters.up_to_message_id} not found in this business`,
        type: 'value_error',
      });
    }
    if (issues.length) throw new AppError('validation', 'Validation error', { issues });
  }
  const selectors: SQL[] = [
    sql`m.business_id = ${businessId}`,
    sql`m.direction = 'inbound'`,
    sql`m.message_type <> 'NOTE'`,
    sql`m.is_read <> ${filters.is_read}`,
  ];
  if (filters.conversation_id !== undefined) selectors.push(sql`m.conversation_id = ${filters.conversation_id}`);
  if (filters.client_id !== undefined) selectors.push(sql`m.client_id = ${filters.client_id}`);
  if (filters.message_ids) selectors.push(sql`m.id = any(${sql.param(filters.message_ids)}::bigint[])`);
  if (filters.up_to_message_id !== undefined) selectors.push(sql`m.id <= ${filters.up_to_message_id}`);
  const delta = filters.is_read ? -1 : 1;
  const result = await tx.transaction(async (tx) => {
    // Rows are locked in id order before they change, so overlapping calls queue, never deadlock.
    const changed = await tx.execute<{ conversation_id: number; n: number; max_id: number }>(sql`
      with target as (
        select m.id from messages m where ${sql.join(selectors, sql` and `)} order by m.id for no key update
      ), changed as (
        update messages m set is_read = ${filters.is_read}
        from target t where m.id = t.id and m.is_read <> ${filters.is_read}
        returning m.conversation_id, m.id
      )
      select conversation_id, count(*)::int as n, max(id)::int as max_id from changed group by conversation_id`);
    const read: { conversation_id: number; n: number; unread_count: number }[] = [];
    for (const c of [...changed].sort((a, b) => a.conversation_id - b.conversation_id)) {
      const [after] = await tx.execute<{ unread_count: number }>(sql`
        update conversations set
          unread_count = greatest(unread_count + ${delta * c.n}, 0),
          last_read_message_id = case when ${filters.is_read} then greatest(coalesce(last_read_message_id, 0), ${c.max_id}) else last_read_message_id end
        where id = ${c.conversation_id} and business_id = ${businessId}
        returning unread_count`);
      read.push({ conversation_id: c.conversation_id, n: c.n, unread_count: after!.unread_count });
    }
    // A read mark is a change other staff see (the unread counts): one event per conversation.
    await recordEvents(
      read.map((c) => ({
        type: 'conversation.read' as const,
        businessId,
        conversationId: c.conversation_id,
        actor,
        data: { conversation_id: c.conversation_id, is_read: filters.is_read, message_count: c.n, unread_count: c.unread_count },
      })),
      tx,
    );
    return changed.reduce((sum, c) => sum + c.n, 0);
  });
  return { success: true, updated: result, message: `${result} message(s) marked ${filters.is_read ? 'read' : 'unread'}` };
}

/** POST /messages/{id}/flag: flagged_count moves by one only when the flag actually changes. */
export async function flagMessage(businessId: number, messageId: number, flagged: boolean, actor: EventActor, tx: Tx = db) {
  const found = await tx.transaction(async (tx) => {
    const [row] = await tx.execute<MessageSummaryRow & { changed: boolean }>(sql`
      with target as (select ${MESSAGE_SUMMARY}, flagged from messages where business_id = ${businessId} and id = ${messageId} for no key update),
      upd as (update messages m set flagged = ${flagged} from target t where m.id = t.id and t.flagged <> ${flagged} returning m.id)
      select t.*, exists (select 1 from upd) as changed from target t`);
    if (!row) return null;
    if (row.changed) {
      await tx.execute(sql`update conversations set flagged_count = greatest(flagged_count + ${flagged ? 1 : -1}, 0)
                           where id = ${row.conversation_id} and business_id = ${businessId}`);
      await recordEvents(
        [
          {
            type: 'message.flagged',
            businessId,
            conversationId: row.conversation_id,
            messageId,
            clientId: row.client_id,
            actor,
            data: { ...messageSummary(row), flagged },
          },
        ],
        tx,
      );
    }
    return row;
  });
  if (!found) throw AppError.notFound('Message');
  const [item] = await selectMessageItems(tx).where(eq(messages.id, messageId));
  return { success: true, data: toMessageItem(item!) };
}
