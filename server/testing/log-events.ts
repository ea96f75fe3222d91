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
