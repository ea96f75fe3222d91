import { sql } from 'drizzle-orm';
import type { Channel, Direction, EventType, MessageStatus, MessageType } from '@/db/schema';
import { textArray } from '@/db/sql-array';
import { db, type Tx } from '@/server/db/client';
import { EVENT_DATA, EventActor, type EventData } from './types';

/** An event to write: what changed (type and data), where (business, conversation, message, client), and who did it. */
export type NewEvent = {
  [T in EventType]: {
    type: T;
    businessId: number;
    conversationId?: number | null;
    messageId?: number | null;
    clientId?: number | null;
    actor: EventActor;
    data: EventData[T];
  };
}[EventType];

/** The columns of a message an event's data names (`message` in types.ts), for a statement's select list. */
export const MESSAGE_SUMMARY = sql`id, conversation_id, client_id, channel, message_type, direction, status`;
export type MessageSummaryRow = {
  id: number;
  conversation_id: number;
  client_id: number | null;
  channel: Channel;
  message_type: MessageType;
  direction: Direction;
  status: MessageStatus;
};

/** The message fields of an event's data, from a row selected with MESSAGE_SUMMARY. */
export const messageSummary = (r: MessageSummaryRow) => ({
  message_id: r.id,
  conversation_id: r.conversation_id,
  client_id: r.client_id,
  channel: r.channel,
  message_type: r.message_type,
  direction: r.direction,
  status: r.status,
});

/** The actor of a change made with a staff member known (a session, or an API request naming one), else by the API. */
export const staffOrApi = (staffId: number | null | undefined): EventActor =>
  staffId ? { type: 'staff', staff_id: staffId } : { type: 'api' };

/**
 * Appends events to the log (docs/architecture.md#event-log), in the caller's transaction: they
 * exist exactly when the change they describe commits. One statement whatever their number (a
 * bulk send's thousand messages are one insert). Each event's data is checked against its type's
 * schema first: a wrong shape is a bug, thrown before anything is written. Returns their ids, in
 * the order given.
 */
export async function recordEvents(events: readonly NewEvent[], tx: Tx = db): Promise<number[]> {
  if (events.length === 0) return [];
  const data = events.map((e) => JSON.stringify(EVENT_DATA[e.type].parse(e.data)));
  const actors = events.map((e) => EventActor.parse(e.actor));
  const rows = await tx.execute<{ id: number }>(sql`
    insert into events (business_id, type, conversation_id, message_id, client_id, actor_type, actor_staff_id, data)
    select v.business_id::int, v.type, v.conversation_id::int, v.message_id::bigint, v.client_id::int,
           v.actor_type, v.actor_staff_id::int, v.data::jsonb
    from unnest(${textArray(events.map((e) => e.businessId))}, ${textArray(events.map((e) => e.type))},
                ${textArray(events.map((e) => e.conversationId ?? null))}, ${textArray(events.map((e) => e.messageId ?? null))},
                ${textArray(events.map((e) => e.clientId ?? null))}, ${textArray(actors.map((a) => a.type))},
                ${textArray(actors.map((a) => a.staff_id ?? null))}, ${textArray(data)})
         with ordinality as v(business_id, type, conversation_id, message_id, client_id, actor_type, actor_staff_id, data, ord)
    order by v.ord
    returning id`);
  // Ids are taken in the order of the rows (ORDER BY v.ord); RETURNING's order is not guaranteed.
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

/**
 * Names the actor of the changes the rest of the caller's transaction makes that the database
 * itself records as events (message status changes: migration 0025); without it they are the
 * system's. Transaction-local: `tx` must be a transaction.
 */
export async function setEventActor(actor: EventActor, tx: Tx): Promise<void> {
  await tx.execute(sql`select set_config('app.event_actor', ${actor.type}, true),
                              set_config('app.event_actor_staff_id', ${actor.staff_id === undefined ? '' : String(actor.staff_id)}, true)`);
}
