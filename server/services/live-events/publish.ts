import { sql, type SQL } from 'drizzle-orm';
import type { Tx } from '@/server/db/client';
import { textArray } from '@/db/sql-array';

/**
 * Inbox events (docs/api.md#live-events) go out on PostgreSQL NOTIFY inside the writer's transaction, so
 * they are delivered exactly when the change commits, to every web process that LISTENs.
 */
export const EVENTS_CHANNEL = 'inbox_events';

export type InboxEvent =
  | { type: 'message.created'; businessId: number; conversationIds: number[]; messageIds: number[] }
  | { type: 'message.status'; businessId: number; conversationIds: number[]; messageIds: number[] }
  | { type: 'conversation.updated'; businessId: number; conversationIds: number[] };

/**
 * NOTIFY payloads are capped at 8000 bytes: long id lists are split into several events. 150 ids
 * of up to 19 digits, twice (messages and conversations), stay under the cap.
 */
export const MAX_IDS = 150;
const SQL_CHUNK = MAX_IDS;

/**
 * The `message.status` event for rows a caller's statement changed, as one SELECT of pg_notify per
 * business, for use inside a single-statement batch (a CTE). `changed` names a relation with the
 * columns id, business_id, conversation_id. The keys are checked against InboxEvent.
 */
export function messageStatusNotifySql(changed: SQL): SQL {
  const keys = {
    type: sql`'message.status'`,
    businessId: sql`c.business_id`,
    conversationIds: sql`json_agg(distinct c.conversation_id)`,
    messageIds: sql`json_agg(c.id)`,
  } satisfies Record<keyof Extract<InboxEvent, { type: 'message.status' }>, SQL>;
  const pairs = Object.entries(keys).map(([key, value]) => sql`${sql.raw(`'${key}'`)}, ${value}`);
  // Chunks of at most SQL_CHUNK ids keep each payload under NOTIFY's 8000-byte cap.
  return sql`select pg_notify(${EVENTS_CHANNEL}, json_build_object(${sql.join(pairs, sql`, `)})::text)
    from (select *, (row_number() over (partition by business_id order by id) - 1) / ${sql.raw(String(SQL_CHUNK))} as chunk
          from ${changed}) c
    group by c.business_id, c.chunk`;
}

export async function publish(event: InboxEvent, tx: Tx): Promise<void> {
  const conversationIds = [...new Set(event.conversationIds)];
  const messageIds = 'messageIds' in event ? event.messageIds : [];
  // Every id reaches some part: both lists are split at the same offsets.
  const longest = Math.max(conversationIds.length, messageIds.length, 1);
  const parts: string[] = [];
  for (let i = 0; i < longest; i += MAX_IDS) {
    const part =
      'messageIds' in event
        ? { ...event, messageIds: messageIds.slice(i, i + MAX_IDS), conversationIds: conversationIds.slice(i, i + MAX_IDS) }
        : { ...event, conversationIds: conversationIds.slice(i, i + MAX_IDS) };
    parts.push(JSON.stringify(part));
  }
  // Every part in one statement: a 1,000-message bulk send's seven parts were seven round trips
  // inside its transaction.
  await tx.execute(sql`select pg_notify(${EVENTS_CHANNEL}, p) from unnest(${textArray(parts)}) as p`);
}
