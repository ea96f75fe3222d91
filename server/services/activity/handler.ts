import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import type { EventHandler, LoggedEvent } from '@/server/services/events/dispatch';
import { ACTIVITY_TYPES } from '@/server/shared/activity';

/**
 * The timeline's activity lines (docs/architecture.md#event-log): a handler of the event log that
 * keeps, for every assignment, status change, snooze, wake-up, label, opt-out, opt-in and consent
 * record, a line in `conversation_activities` saying who did it (the event's actor) and when. The
 * lines are durable (kept as long as their conversation); the log they are made from is pruned.
 *
 * Where a line goes: a conversation's own events to that conversation; a client's (opt-out, opt-in,
 * consent) to the conversation of each client it concerns that existed when it happened — an
 * opt-out belongs to an address, so when a family shares a number every one of their conversations
 * says so. A client without a conversation yet gets no line: a conversation opened later shows the
 * client's state in its panel, not the past.
 *
 * Written in the dispatcher's transaction, with its cursor: each event's lines once. The unique
 * (event_id, conversation_id) makes a second run over the same events (a cursor reset, a copy of
 * the handler) write nothing more. One statement per batch, whatever its size.
 */

/** The cursor's name in `event_handler_cursors`; the inbox reads it to know whether lines are still to come. */
export const ACTIVITY_HANDLER = 'conversation-activity';

/**
 * Events that say nothing a neighbouring line does not: a snooze is logged as a status change to
 * `snoozed` and a `conversation.snoozed` (its time); the sweeper's wake-up as a status change back
 * to `open` and a `conversation.woke`. The second of each pair is the line.
 */
export function makesLine(e: Pick<LoggedEvent, 'type' | 'actor' | 'data'>): boolean {
  if (e.type !== 'conversation.status_changed') return true;
  if (e.data.status === 'snoozed') return false;
  return !(e.actor.type === 'system' && e.data.previous_status === 'snoozed');
}

/** The clients an opt-out, opt-in or consent record concerns (an opt-out's address may be several clients'). */
function clientsOf(e: LoggedEvent): number[] {
  if (e.type === 'client.opted_out' || e.type === 'client.opted_in') {
    const ids = e.data.client_ids;
    return Array.isArray(ids) ? ids.filter((id): id is number => typeof id === 'number') : [];
  }
  if (e.type === 'consent.recorded') return e.clientId === null ? [] : [e.clientId];
  return [];
}

export async function writeActivityLines(events: readonly LoggedEvent[], tx: Tx = db): Promise<number> {
  const lines = events.filter(makesLine).map((e) => ({
    event_id: e.id,
    business_id: e.businessId,
    type: e.type,
    conversation_id: e.type.startsWith('conversation.') ? e.conversationId : null,
    client_ids: clientsOf(e),
    actor_type: e.actor.type,
    actor_staff_id: e.actor.staff_id ?? null,
    data: e.data,
    occurred_at: e.occurredAt.toISOString(),
  }));
  if (lines.length === 0) return 0;
  // One JSON parameter for the batch; each line joins the conversations it belongs to (by id, or by
  // client through conversations_business_client_key), within the event's business.
  const written = await tx.execute(sql`
    with e as (
      select * from jsonb_to_recordset(${JSON.stringify(lines)}::jsonb) as e(
        event_id bigint, business_id int, type text, conversation_id int, client_ids int[],
        actor_type text, actor_staff_id int, data jsonb, occurred_at timestamptz)
    ), target as (
      select e.event_id, c.id as conversation_id
      from e join conversations c on c.business_id = e.business_id and c.id = e.conversation_id
      union all
      select e.event_id, c.id
      from e cross join lateral unnest(e.client_ids) as u(client_id)
      join conversations c on c.business_id = e.business_id and c.client_id = u.client_id and c.created_at <= e.occurred_at
    )
    insert into conversation_activities (business_id, conversation_id, event_id, type, actor_type, actor_staff_id, data, occurred_at)
    select e.business_id, t.conversation_id, e.event_id, e.type, e.actor_type, e.actor_staff_id, e.data, e.occurred_at
    from target t join e on e.event_id = t.event_id
    order by e.event_id, t.conversation_id
    on conflict (event_id, conversation_id) do nothing`);
  return written.count ?? 0;
}

export const conversationActivityHandler: EventHandler = {
  name: ACTIVITY_HANDLER,
  types: ACTIVITY_TYPES,
  handle: async (events, tx) => void (await writeActivityLines(events, tx)),
};
