import { sql, type SQL } from 'drizzle-orm';
import type { Tx } from '@/server/db/client';
import { asText, textArray } from '@/db/sql-array';
import type { messages } from '@/db/schema';
import { ensureConversationsWith, touchConversations, type NewConversationStart } from '@/server/services/conversations/activity';
import { recordEvents, staffOrApi, type NewEvent } from '@/server/services/events/record';
import type { EventActor } from '@/server/services/events/types';

type Row = typeof messages.$inferInsert;
/** A row of fileMessages: its id and conversation come beside it (Assigned), not in it. */
type UnassignedRow = Omit<Row, 'conversationId'>;
/**
 * Per row, in order: its id, reserved beforehand (reserveMessageIds), and its conversation. Given
 * beside the rows, so a bulk request's 1,000 rows of ~45 fields are not copied to add two.
 */
type Assigned = { ids: readonly number[]; conversationIds: readonly number[] };

/**
 * Bulk message insert as `INSERT … SELECT FROM unnest(col1[], col2[], …)`: one bound array per
 * column that varies (one value for a column that does not) instead of one parameter per value. For a 1,000-item request drizzle's multi-row VALUES
 * builder alone took ~100 ms of CPU; this takes ~1 ms and PostgreSQL plans one statement.
 */
const COLUMNS: [column: string, type: string, value: (r: Row) => unknown][] = [
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
  ['origin', 'text', (r) => r.origin],
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

/** Inserts rows in the given order (ids from the identity) and returns them, with their ids, in that order. */
export async function insertMessages(rows: Row[], tx: Tx): Promise<InsertedMessage[]> {
  if (rows.length === 0) return [];
  const result = await tx.execute<{
    id: number;
    conversation_id: number;
    status: string;
    direction: string;
    unread: boolean;
  }>(sql`${insertStatement(rows)} returning id, conversation_id, status, direction, ${COUNTS_AS_UNREAD} as unread`);
  // INSERT … SELECT … ORDER BY assigns identity values in that order; RETURNING order is not
  // guaranteed, so sort by id to restore input order.
  const inserted = [...result]
    .sort((a, b) => a.id - b.id)
    .map((r) => ({ id: r.id, conversationId: r.conversation_id, status: r.status, direction: r.direction, unread: r.unread }));
  await recordEvents(timelineEvents(rows, inserted), tx);
  return inserted;
}

/**
 * Inserts rows with the ids and conversations assigned to them. Every value RETURNING would answer
 * is already here: nothing comes back (a bulk request's 1,000 rows not sent back to be parsed; the
 * statement changes none of them, insert.test.ts checks the two agree).
 */
async function insertAssigned(rows: UnassignedRow[], assigned: Assigned, tx: Tx): Promise<InsertedMessage[]> {
  await tx.execute(insertStatement(rows, assigned));
  const inserted = rows.map((r, i) => ({
    id: assigned.ids[i]!,
    conversationId: assigned.conversationIds[i]!,
    status: r.status,
    direction: r.direction,
    unread: countsAsUnread(r),
  }));
  await recordEvents(timelineEvents(rows, inserted), tx);
  return inserted;
}

/**
 * The events of new timeline rows (docs/architecture.md#event-log), written with them: every
 * message enters a conversation through this file. An inbound message is `message.received`, an
 * outbound one (sent, scheduled or recorded) `message.created`, a note `note.created`; a call's row
 * has its own events when the call ends (server/services/voice/).
 */
function timelineEvents(rows: readonly UnassignedRow[], inserted: readonly InsertedMessage[]): NewEvent[] {
  return rows.flatMap((r, i): NewEvent[] => {
    const m = inserted[i]!;
    const about = { businessId: r.businessId, conversationId: m.conversationId, messageId: m.id, clientId: r.clientId ?? null };
    if (r.messageType === 'NOTE') {
      const staffId = r.staffId ?? null;
      const data = { conversation_id: m.conversationId, message_id: m.id, staff_id: staffId };
      return [{ ...about, type: 'note.created', actor: staffOrApi(staffId), data }];
    }
    if (r.messageType === 'CALL' || r.channel === null || r.channel === undefined) return [];
    const summary = {
      message_id: m.id,
      conversation_id: m.conversationId,
      client_id: r.clientId ?? null,
      channel: r.channel,
      message_type: r.messageType,
      direction: r.direction,
      status: r.status,
    };
    if (r.direction === 'inbound') return [{ ...about, type: 'message.received', actor: inboundActor(r), data: summary }];
    const sendAt = r.sendAt instanceof Date ? r.sendAt.toISOString() : null;
    return [{ ...about, type: 'message.created', actor: outboundActor(r), data: { ...summary, send_at: sendAt } }];
  });
}

/** An inbound message is the client's, unless another system recorded it (record mode). */
const inboundActor = (r: UnassignedRow): EventActor => (r.origin === 'record' ? staffOrApi(r.staffId) : { type: 'client' });

/** An outbound message is the product's own (automatic answers), or a staff member's, or the API's. */
const outboundActor = (r: UnassignedRow): EventActor => (r.origin === 'system' ? { type: 'system' } : staffOrApi(r.staffId));

function insertStatement(rows: (Row | UnassignedRow)[], assigned?: Assigned): SQL {
  // Each column's value of row i: id and conversation_id from `assigned` when given.
  const columns: [name: string, type: string, value: (r: Row, i: number) => unknown][] = assigned
    ? [
        ['id', 'bigint', (_r, i) => assigned.ids[i]],
        ...COLUMNS.map(([c, type, value]): [string, string, (r: Row, i: number) => unknown] =>
          c === 'conversation_id' ? [c, type, (_r, i) => assigned.conversationIds[i]] : [c, type, value],
        ),
      ]
    : COLUMNS;
  const names = sql.raw(columns.map(([c]) => c).join(', '));
  const all = rows as Row[];
  // Every value travels as text and is cast per column (textArray). A column with one value for
  // every row (a bulk request's business, sender, category, request id…: most of them) is bound
  // once, not as an array of 1,000 copies to serialise and parse (~14 ms a request). Its values are
  // compared without being kept; only a column that varies becomes an array. The first column
  // always goes as an array: unnest needs one, and it numbers the rows.
  const arrays: SQL[] = [];
  const arrayNames: string[] = [];
  const casts = columns.map(([c, type, value], ci) => {
    const first = asText(value(all[0]!, 0));
    let varies = ci === 0;
    for (let i = 1; i < all.length && !varies; i++) varies = asText(value(all[i]!, i)) !== first;
    let raw: SQL;
    if (varies) {
      arrays.push(textArray(all.map((r, i) => value(r, i))));
      arrayNames.push(c);
      raw = sql.raw(`v.${c}`);
    } else raw = sql`${first}::text`;
    return c === 'sent_at' ? sql`coalesce(${raw}::timestamptz, now())` : sql`${raw}::${sql.raw(type)}`;
  });
  return sql`
    insert into messages (${names}) ${assigned ? sql`overriding system value` : sql``}
    select ${sql.join(casts, sql`, `)}
    from unnest(${sql.join(arrays, sql`, `)}) with ordinality as v(${sql.raw(arrayNames.join(', '))}, ord)
    order by v.ord`;
}

/**
 * Ids for rows about to be inserted, from the identity's own sequence, increasing: a caller that
 * needs a message's id before the message exists (fileMessages) takes them here.
 */
export async function reserveMessageIds(n: number, tx: Tx): Promise<number[]> {
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
  businessId: number,
  rows: (Omit<Row, 'id' | 'conversationId' | 'clientId' | 'sentAt'> & { clientId: number; sentAt: Date })[],
  tx: Tx,
): Promise<InsertedMessage[]> {
  if (rows.length === 0) return [];
  const ids = await reserveMessageIds(rows.length, tx);
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
  const { byClient, created } = await ensureConversationsWith(businessId, starts, tx);
  const inserted = await insertAssigned(rows, { ids, conversationIds: rows.map((r) => byClient.get(r.clientId)!) }, tx);
  await touchConversations(
    inserted.filter((m) => !created.has(m.conversationId)),
    tx,
  );
  return inserted;
}
