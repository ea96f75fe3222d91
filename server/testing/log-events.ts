import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { recordEvents, type NewEvent } from '@/server/services/events/record';

/**
 * Appends one `conversation.woke` event per conversation id to the log, in one statement: the
 * smallest event the live stream carries (a `conversation.updated` frame), for tests of the stream
 * that need events and not the changes behind them. Returns their ids, in order.
 */
export function logWakeUps(businessId: number, conversationIds: readonly number[], tx: Tx = db): Promise<number[]> {
  return recordEvents(
    conversationIds.map((id): NewEvent => ({
      type: 'conversation.woke',
      businessId,
      conversationId: id,
      actor: { type: 'system' },
      data: { conversation_id: id },
    })),
    tx,
  );
}

/** The events of one type a business's log holds, oldest first, as a test compares them: where, who and what. */
export function loggedEvents(businessId: number, type: NewEvent['type'], tx: Tx = db) {
  return tx.execute<{
    client_id: number | null;
    conversation_id: number | null;
    actor_type: string;
    actor_staff_id: number | null;
    data: unknown;
  }>(
    sql`select client_id, conversation_id, actor_type, actor_staff_id, data from events
        where business_id = ${businessId} and type = ${type} order by id`,
  );
}
