import type { EventType } from '@/db/schema';
import { ACTIVITY_HANDLER } from '@/server/services/activity/handler';
import { isReplyEvent } from '@/server/services/conversations/waiting';
import type { EventHandler, LoggedEvent } from '@/server/services/events/dispatch';
import { recountReports, type Touch } from './recount';

/**
 * Reports' handler of the event log (docs/architecture.md#reports): for each batch, the
 * conversations whose messages or status changed are recounted from their messages and status
 * history (./recount.ts), from the earliest change on, and the messages counted in volumes are
 * read again (./ledger.ts), in the dispatcher's transaction. It runs behind the activity handler,
 * whose lines are the status history it reads: a resolution's line is written before its event
 * reaches this handler.
 *
 * Idempotent by construction: a recount writes what the messages and lines say, so an event read
 * twice (a cursor reset, a copy of the handler) writes the same rows again, and the rollups move
 * only by what the rows did.
 */

export const REPORTS_HANDLER = 'reports';

export const REPORT_EVENT_TYPES = [
  'message.received',
  'message.created',
  'message.status_updated',
  'conversation.status_changed',
  'call.started',
  'call.completed',
  'voicemail.received',
] as const satisfies readonly EventType[];

/** What a batch asks of one business: conversations to recount, messages to count again. */
export type BusinessTouches = { conversations: Touch[]; messages: number[] };

/**
 * A status change can change whether a message is counted in volumes only when it leaves or enters
 * `scheduled`, `queued` or `canceled` (a scheduled message's first event once sent comes from
 * `sending`, which logs none): deliveries and failures of what was sent are not read again.
 */
const COUNTING_STATUSES = new Set(['scheduled', 'queued', 'sending', 'canceled']);

export function touchesOf(events: readonly LoggedEvent[]): Map<number, BusinessTouches> {
  const byBusiness = new Map<number, BusinessTouches>();
  const of = (businessId: number) => {
    let found = byBusiness.get(businessId);
    if (!found) byBusiness.set(businessId, (found = { conversations: [], messages: [] }));
    return found;
  };
  for (const e of events) {
    if (e.conversationId === null) continue;
    if (e.type === 'message.status_updated') {
      const counting =
        e.data.previous_status === null ||
        COUNTING_STATUSES.has(String(e.data.previous_status)) ||
        COUNTING_STATUSES.has(String(e.data.status));
      if (counting && e.messageId !== null) of(e.businessId).messages.push(e.messageId);
      continue;
    }
    // Only resolutions and reopenings of a resolved conversation change cycles.
    if (e.type === 'conversation.status_changed' && e.data.status !== 'resolved' && e.data.previous_status !== 'resolved') {
      continue;
    }
    // Of our texts and emails, only replies change cycles (a campaign's 10,000 texts recount
    // nothing): the others are only counted in volumes.
    const ourTextOrEmail = e.data.direction === 'outbound' && (e.data.message_type === 'TEXT' || e.data.message_type === 'EMAIL');
    if (e.type === 'message.created' && ourTextOrEmail && !isReplyEvent(e)) {
      if (e.messageId !== null) of(e.businessId).messages.push(e.messageId);
      continue;
    }
    of(e.businessId).conversations.push({
      conversationId: e.conversationId,
      messageId: e.messageId,
      at: e.occurredAt.toISOString(),
    });
  }
  return byBusiness;
}

export const reportsHandler: EventHandler = {
  name: REPORTS_HANDLER,
  types: REPORT_EVENT_TYPES,
  after: ACTIVITY_HANDLER,
  handle: async (events, tx) => {
    // Businesses in id order: each takes its reports lock, and a backfill holds one at a time.
    const touched = [...touchesOf(events)].sort(([a], [b]) => a - b);
    for (const [businessId, t] of touched) await recountReports(businessId, t.conversations, t.messages, tx);
  },
};
