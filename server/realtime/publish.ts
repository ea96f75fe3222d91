import { sql, type SQL } from 'drizzle-orm';
import type { Tx } from '@/db/client';

/**
 * Inbox events (docs/api.md#live-events) go out on PostgreSQL NOTIFY inside the writer's transaction, so
 * they are delivered exactly when the change commits, to every web process that LISTENs.
 */
export const EVENTS_CHANNEL = 'inbox_events';

export type InboxEvent =
  | { type: 'message.created'; businessId: number; conversationIds: number[]; messageIds: number[] }
  | { type: 'message.status'; businessId: number; conversationIds: number[]; messageIds: number[] }
  | { type: 'conversation.updated'; businessId: number; conversationIds: number[] };

/** NOTIFY payloads are capped at 8000 bytes: long id lists are split into several events. */
const MAX_IDS = 500;
/** In SQL the ids' width is not known up front: 150 ids of up to 19 digits, twice, stay under 8000 bytes. */
const SQL_CHUNK = 150;

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

export async function publish(tx: Tx, event: InboxEvent): Promise<void> {
  const ids = 'messageIds' in event ? event.messageIds : event.conversationIds;
  for (let i = 0; i < Math.max(ids.length, 1); i += MAX_IDS) {
    const part =
      'messageIds' in event
        ? {
            ...event,
            messageIds: event.messageIds.slice(i, i + MAX_IDS),
            conversationIds: [...new Set(event.conversationIds)].slice(0, MAX_IDS),
          }
        : { ...event, conversationIds: event.conversationIds.slice(i, i + MAX_IDS) };
    await tx.execute(sql`select pg_notify(${EVENTS_CHANNEL}, ${JSON.stringify(part)})`);
  }
}
