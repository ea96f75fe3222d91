import { sql, type SQL } from 'drizzle-orm';
import type { Tx } from '@/server/db/client';
import { asText, textArray } from '@/db/sql-array';
import type { messages } from '@/db/schema';
import { ensureConversationsWith, touchConversations, type NewConversationStart } from '@/server/services/conversations/activity';
import { WAITING_EFFECT, waitingEffect, type WaitingEffect } from '@/server/services/conversations/waiting';

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

export type InsertedMessage = {
  id: number;
  conversationId: number;
  status: string;
  direction: string;
  unread: boolean;
  waiting: WaitingEffect;
};

/**
 * Inserts rows in the given order (ids from the identity) and returns them, with their ids, in that
 * order.
 */
export async function insertMessages(rows: Row[], tx: Tx): Promise<InsertedMessage[]> {
  return insertMessagesMentioning(rows, [], tx);
}

/**
 * insertMessages, with the staff a note among the rows mentions (docs/api.md#mentions) named by its
 * `note.created` event (insertNote writes one note at a time).
 */
export async function insertMessagesMentioning(
  rows: Row[],
  mentionedStaffIds: readonly number[],
  tx: Tx,
): Promise<InsertedMessage[]> {
  if (rows.length === 0) return [];
  const result = await tx.execute<{
    id: number;
    conversation_id: number;
    status: string;
    direction: string;
    unread: boolean;
    waiting: WaitingEffect;
  }>(
    withTimelineEvents(
      insertStatement(rows),
      sql`select id, conversation_id, status, direction, unread, waiting from m`,
      mentionedStaffIds,
    ),
  );
  // INSERT … SELECT … ORDER BY assigns identity values in that order; RETURNING order is not
  // guaranteed, so sort by id to restore input order.
  return [...result]
    .sort((a, b) => a.id - b.id)
    .map((r) => ({
      id: r.id,
      conversationId: r.conversation_id,
      status: r.status,
      direction: r.direction,
      unread: r.unread,
      waiting: r.waiting,
    }));
}

/**
 * Inserts rows with the ids and conversations assigned to them. Every value RETURNING would answer
 * is already here: nothing comes back (a bulk request's 1,000 rows not sent back to be parsed; the
 * statement changes none of them, insert.test.ts checks the two agree).
 */
async function insertAssigned(rows: UnassignedRow[], assigned: Assigned, tx: Tx): Promise<InsertedMessage[]> {
  await tx.execute(withTimelineEvents(insertStatement(rows, assigned)));
  return rows.map((r, i) => ({
    id: assigned.ids[i]!,
    conversationId: assigned.conversationIds[i]!,
    status: r.status,
    direction: r.direction,
    unread: countsAsUnread(r),
    waiting: waitingEffect(r),
  }));
}

/**
 * A message insert that also writes its rows' events (docs/architecture.md#event-log), in the same
 * statement, from the rows it inserted: every message enters a conversation through this file. An
 * inbound message is `message.received`, an outbound one (sent, scheduled or recorded)
 * `message.created`, a note `note.created`; a call's row has its own events when the call ends
 * (migration 0027). Built in SQL rather than through recordEvents: for a bulk request's 1,000
 * events, their JavaScript objects, schema checks and text-array escaping cost the web process
 * ~175 ms of CPU, GC included (docs/performance.md, bench:send). The data are EVENT_DATA's shapes,
 * which events.test.ts checks instead of each write; a time is written as toISOString writes it.
 * Actors: an inbound message is the client's unless another system recorded it (record mode), an
 * outbound one the product's own when it is an automatic answer (origin `system`); otherwise the
 * staff member's who wrote it, else the API's. `select`, when given, reads what the insert
 * returned (`m`); without it the statement returns nothing. A note's event names the staff it
 * mentions (`mentionedStaffIds`, empty for every other note).
 */
function withTimelineEvents(insert: SQL, select?: SQL, mentionedStaffIds: readonly number[] = []): SQL {
  const events = sql`
    insert into events (business_id, type, conversation_id, message_id, client_id, actor_type, actor_staff_id, data)
    select m.business_id, k.type, m.conversation_id, m.id, m.client_id, k.actor,
      case when k.actor = 'staff' then m.staff_id end,
      case when k.type = 'note.created'
        then jsonb_build_object('conversation_id', m.conversation_id, 'message_id', m.id, 'staff_id', m.staff_id,
          'mentioned_staff_ids', ${JSON.stringify(mentionedStaffIds)}::jsonb)
        else jsonb_build_object('message_id', m.id, 'conversation_id', m.conversation_id, 'client_id', m.client_id,
            'channel', m.channel, 'message_type', m.message_type, 'direction', m.direction, 'status', m.status)
          || case when k.type = 'message.created'
            then jsonb_build_object('send_at', to_char(m.send_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
            else '{}'::jsonb end
      end
    from m cross join lateral (select
      case when m.message_type = 'NOTE' then 'note.created'
           when m.direction = 'inbound' then 'message.received'
           else 'message.created' end as type,
      case when m.message_type <> 'NOTE' and m.direction = 'inbound' and m.origin is distinct from 'record' then 'client'
           when m.message_type <> 'NOTE' and m.direction <> 'inbound' and m.origin = 'system' then 'system'
           when m.staff_id is not null then 'staff'
           else 'api' end as actor) k
    where m.message_type = 'NOTE' or (m.message_type <> 'CALL' and m.channel is not null)
    order by m.id`;
  const inserted = sql`${insert} returning id, business_id, conversation_id, client_id, channel, message_type, direction,
    status, origin, sender_type, staff_id, send_at, ${COUNTS_AS_UNREAD} as unread, ${WAITING_EFFECT} as waiting`;
  return select ? sql`with m as (${inserted}), e as (${events}) ${select}` : sql`with m as (${inserted}) ${events}`;
}

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
    // In the rows' order: a reply ends the waiting, the client's texts after it start it at the earliest of them.
    const effect = waitingEffect(r);
    const since = start?.waitingSince ?? null;
    const waitingSince = effect === 'reply' ? null : effect === 'client' && (since === null || sentAt < since) ? sentAt : since;
    starts.set(r.clientId, {
      latest: newer ? { id: ids[i]!, content: r.content ?? null, channel: r.channel ?? null, sentAt } : start.latest,
      unread,
      waitingSince,
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
