import { sql } from 'drizzle-orm';
import type { Tx } from '@/db/client';
import { asText, textArray } from '@/db/sql-array';
import type { messages } from '@/db/schema';
import { ensureConversationsWith, touchConversations, type NewConversationStart } from '@/server/services/conversations';

/** A row to insert; `id` only when reserved beforehand (reserveMessageIds). */
type Row = typeof messages.$inferInsert & { id?: number };

/**
 * Bulk message insert as `INSERT … SELECT FROM unnest(col1[], col2[], …)`: one bound array per
 * column that varies (one value for a column that does not) instead of one parameter per value. For a 1,000-item request drizzle's multi-row VALUES
 * builder alone took ~100 ms of CPU; this takes ~1 ms and PostgreSQL plans one statement.
 */
const COLUMNS: [column: string, type: string, value: (r: Row) => unknown][] = [
  ['id', 'bigint', (r) => r.id ?? null],
  ['business_id', 'int', (r) => r.businessId],
  ['conversation_id', 'int', (r) => r.conversationId],
  ['client_id', 'int', (r) => r.clientId],
  ['channel', 'text', (r) => r.channel ?? null],
  ['direction', 'text', (r) => r.direction],
  ['message_type', 'text', (r) => r.messageType],
  ['category', 'text', (r) => r.category ?? 'conversational'],
  ['notification_type', 'text', (r) => r.notificationType ?? null],
  ['sender_type', 'text', (r) => r.senderType],
  ['sender_id', 'int', (r) => r.senderId ?? null],
  ['receiver_type', 'text', (r) => r.receiverType ?? null],
  ['receiver_id', 'int', (r) => r.receiverId ?? null],
  ['staff_id', 'int', (r) => r.staffId ?? null],
  ['sent_by', 'int', (r) => r.sentBy ?? null],
  ['wl_user_id', 'int', (r) => r.wlUserId ?? null],
  ['content', 'text', (r) => r.content ?? null],
  ['subject', 'text', (r) => r.subject ?? null],
  ['from_address', 'text', (r) => r.fromAddress ?? null],
  ['to_address', 'text', (r) => r.toAddress ?? null],
  ['cc', 'jsonb', (r) => json(r.cc)],
  ['bcc', 'jsonb', (r) => json(r.bcc)],
  ['attachments', 'jsonb', (r) => json(r.attachments)],
  ['status', 'text', (r) => r.status],
  ['provider', 'text', (r) => r.provider ?? null],
  ['provider_message_id', 'text', (r) => r.providerMessageId ?? null],
  ['provider_metadata', 'jsonb', (r) => json(r.providerMetadata)],
  ['email_message_id', 'text', (r) => r.emailMessageId ?? null],
  ['in_reply_to', 'text', (r) => r.inReplyTo ?? null],
  ['request_id', 'uuid', (r) => r.requestId ?? null],
  ['response_id', 'bigint', (r) => r.responseId ?? null],
  ['is_read', 'boolean', (r) => r.isRead ?? false],
  ['flagged', 'boolean', (r) => r.flagged ?? false],
  ['recording_url', 'text', (r) => r.recordingUrl ?? null],
  ['call_duration_seconds', 'int', (r) => r.callDurationSeconds ?? null],
  ['call_outcome', 'text', (r) => r.callOutcome ?? null],
  ['error_code', 'text', (r) => r.errorCode ?? null],
  ['error_message', 'text', (r) => r.errorMessage ?? null],
  ['attempts', 'int', (r) => r.attempts ?? 0],
  ['segments', 'int', (r) => r.segments ?? null],
  ['encoding', 'text', (r) => r.encoding ?? null],
  ['sent_at', 'timestamptz', (r) => (r.sentAt instanceof Date ? r.sentAt.toISOString() : null)],
  ['send_at', 'timestamptz', (r) => (r.sendAt instanceof Date ? r.sendAt.toISOString() : null)],
  ['cancel_on_reply', 'boolean', (r) => r.cancelOnReply ?? true],
  ['quiet_hours', 'jsonb', (r) => json(r.quietHours)],
  ['hold_reason', 'text', (r) => r.holdReason ?? null],
];

function json(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/**
 * Whether a message row counts toward its conversation's unread_count (touchConversations): an
 * inbound message not read yet; notes never do. Unqualified, for an INSERT's RETURNING.
 */
export const COUNTS_AS_UNREAD = sql.raw(`(direction = 'inbound' and not is_read and message_type <> 'NOTE')`);

/** COUNTS_AS_UNREAD of a row about to be inserted (insert.test.ts checks the two agree). */
export const countsAsUnread = (r: Pick<Row, 'direction' | 'isRead' | 'messageType'>) =>
  r.direction === 'inbound' && !(r.isRead ?? false) && r.messageType !== 'NOTE';

export type InsertedMessage = { id: number; conversationId: number; status: string; direction: string; unread: boolean };

/**
 * Inserts rows in the given order and returns their ids in that order. Rows either all carry an id
 * reserved by reserveMessageIds, or none does (the identity assigns them).
 */
export async function insertMessages(tx: Tx, rows: Row[]): Promise<InsertedMessage[]> {
  if (rows.length === 0) return [];
  const reserved = rows[0]!.id !== undefined;
  if (rows.some((r) => (r.id !== undefined) !== reserved)) throw new Error('insertMessages: some rows carry an id, some do not');
  const columns = reserved ? COLUMNS : COLUMNS.filter(([c]) => c !== 'id');
  const names = sql.raw(columns.map(([c]) => c).join(', '));
  // Every value travels as text and is cast per column (textArray). A column with one value for
  // every row (a bulk request's business, sender, category, request id…: most of them) is bound
  // once, not as an array of 1,000 copies to serialise and parse (~14 ms a request).
  const values = columns.map(([, , value]) => rows.map((r) => asText(value(r))));
  // The first column always goes as an array: unnest needs one, and it numbers the rows.
  const varies = values.map((v, i) => i === 0 || v.some((x) => x !== v[0]));
  const arrays = values.flatMap((v, i) => (varies[i] ? [textArray(v)] : []));
  const arrayNames = sql.raw(columns.flatMap(([c], i) => (varies[i] ? [c] : [])).join(', '));
  const casts = sql.join(
    columns.map(([c, type], i) => {
      const raw = varies[i] ? sql.raw(`v.${c}`) : sql`${values[i]![0]}::text`;
      return c === 'sent_at' ? sql`coalesce(${raw}::timestamptz, now())` : sql`${raw}::${sql.raw(type)}`;
    }),
    sql`, `,
  );
  const insert = sql`
    insert into messages (${names}) ${reserved ? sql`overriding system value` : sql``}
    select ${casts}
    from unnest(${sql.join(arrays, sql`, `)}) with ordinality as v(${arrayNames}, ord)
    order by v.ord`;
  if (reserved) {
    // Every value RETURNING would answer is already here: not sending a bulk request's 1,000 rows
    // back to be parsed (the statement changes none of them; insert.test.ts checks the two agree).
    await tx.execute(insert);
    return rows.map((r) => ({
      id: r.id!,
      conversationId: r.conversationId,
      status: r.status,
      direction: r.direction,
      unread: countsAsUnread(r),
    }));
  }
  const result = await tx.execute<{
    id: number;
    conversation_id: number;
    status: string;
    direction: string;
    unread: boolean;
  }>(sql`${insert} returning id, conversation_id, status, direction, ${COUNTS_AS_UNREAD} as unread`);
  // INSERT … SELECT … ORDER BY assigns identity values in that order; RETURNING order is not
  // guaranteed, so sort by id to restore input order.
  return [...result]
    .sort((a, b) => a.id - b.id)
    .map((r) => ({ id: r.id, conversationId: r.conversation_id, status: r.status, direction: r.direction, unread: r.unread }));
}

/**
 * Ids for rows about to be inserted, from the identity's own sequence, increasing: a caller that
 * needs a message's id before the message exists (fileMessages) takes them here.
 */
export async function reserveMessageIds(tx: Tx, n: number): Promise<number[]> {
  const rows = await tx.execute<{ id: string }>(
    sql`select nextval(pg_get_serial_sequence('messages', 'id')) as id from generate_series(1, ${n}::int)`,
  );
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/**
 * New messages into their clients' conversations: creates the conversations that do not exist yet
 * already carrying their latest message and unread count (ensureConversationsWith), inserts the
 * messages in the given order, and touches only the conversations that existed before. Returns the
 * inserted rows in the given order.
 */
export async function fileMessages(
  tx: Tx,
  businessId: number,
  rows: (Omit<Row, 'id' | 'conversationId' | 'clientId' | 'sentAt'> & { clientId: number; sentAt: Date })[],
): Promise<InsertedMessage[]> {
  if (rows.length === 0) return [];
  const ids = await reserveMessageIds(tx, rows.length);
  // Each client's start if its conversation is new: its latest message (sent_at, then id, as
  // touchConversations orders them) and how many of its messages count as unread.
  const starts = new Map<number, NewConversationStart>();
  rows.forEach((r, i) => {
    const start = starts.get(r.clientId);
    const { sentAt } = r;
    const unread = (start?.unread ?? 0) + (countsAsUnread(r) ? 1 : 0);
    const newer = !start || sentAt.getTime() >= start.latest.sentAt.getTime();
    starts.set(r.clientId, {
      latest: newer ? { id: ids[i]!, content: r.content ?? null, channel: r.channel ?? null, sentAt } : start.latest,
      unread,
    });
  });
  const { byClient, created } = await ensureConversationsWith(tx, businessId, starts);
  const inserted = await insertMessages(
    tx,
    rows.map((r, i) => ({ ...r, id: ids[i]!, conversationId: byClient.get(r.clientId)! })),
  );
  await touchConversations(
    tx,
    inserted.filter((m) => !created.has(m.conversationId)),
  );
  return inserted;
}
