import { sql } from 'drizzle-orm';
import type { Tx } from '@/db/client';

/**
 * Inbox events (SPEC §6.1 Events) go out on PostgreSQL NOTIFY inside the writer's transaction, so
 * they are delivered exactly when the change commits, to every web process that LISTENs.
 */
export const EVENTS_CHANNEL = 'inbox_events';

export type InboxEvent =
  | { type: 'message.created'; businessId: number; conversationIds: number[]; messageIds: number[] }
  | { type: 'message.status'; businessId: number; conversationIds: number[]; messageIds: number[] }
  | { type: 'conversation.updated'; businessId: number; conversationIds: number[] };

/** NOTIFY payloads are capped at 8000 bytes: long id lists are split into several events. */
const MAX_IDS = 500;

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
