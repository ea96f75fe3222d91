import { sql } from 'drizzle-orm';
import type { EventActorType, EventType } from '@/db/schema';
import { equalsAny } from '@/db/sql-array';
import { db, type Tx } from '@/server/db/client';

/** An event as handlers receive it (docs/architecture.md#event-log). */
export type LoggedEvent = {
  id: number;
  businessId: number;
  type: EventType;
  conversationId: number | null;
  messageId: number | null;
  clientId: number | null;
  actor: { type: EventActorType; staff_id?: number };
  data: Record<string, unknown>;
  occurredAt: Date;
};

/**
 * A consumer of the log: named (its cursor's key), the types it takes, and what it does with a
 * batch, in the transaction that also moves its cursor. So its own database writes happen exactly
 * once per event; what it does outside the database (a delivery over HTTP) may happen again after a
 * crash between doing it and committing, so it must be idempotent by event id.
 */
export type EventHandler = {
  name: string;
  types: readonly EventType[];
  handle: (events: LoggedEvent[], tx: Tx) => Promise<void>;
  /**
   * Another handler whose effects this one must see (its name): it reads only events that handler
   * has passed, so what that one did with an event (committed with its cursor) is there to read.
   * Notifications run after auto-assignment: "nobody holds it" means assignment found nobody.
   */
  after?: string;
};

const BATCH = 500;

/** An `events` row, as selected with its columns' names. */
export type EventRow = {
  id: number;
  business_id: number;
  type: EventType;
  conversation_id: number | null;
  message_id: number | null;
  client_id: number | null;
  actor_type: EventActorType;
  actor_staff_id: number | null;
  data: Record<string, unknown>;
  occurred_at: Date;
};

/** An `events` row as handlers receive it. */
export const toLoggedEvent = (r: EventRow): LoggedEvent => ({
  id: r.id,
  businessId: r.business_id,
  type: r.type,
  conversationId: r.conversation_id,
  messageId: r.message_id,
  clientId: r.client_id,
  actor: r.actor_staff_id === null ? { type: r.actor_type } : { type: r.actor_type, staff_id: r.actor_staff_id },
  data: r.data,
  occurredAt: new Date(r.occurred_at),
});

/**
 * Gives `handler` the next batch of the log it has not seen, in order, and moves its cursor past
 * them; returns how many events were read (0: it is caught up). The order is (tx_id, id), and only
 * events of transactions older than every transaction still running are read: each later commit
 * has a tx_id at or above that bound, so it sorts after the cursor and is never skipped, whatever
 * order ids were taken in. That is not quite commit order: of two transactions changing one
 * conversation, the one that waited for the other's lock can have the lower tx_id, so a handler
 * that must keep a conversation's order (outgoing webhooks) orders by the conversation's own
 * sequence, not by this. A long transaction holds every handler back until it ends. Two
 * dispatchers of one handler never overlap: the first holds an advisory lock of the handler's name,
 * and a second one skips (returns 0). Events of other types are read past without being handed over.
 */
export async function dispatchEvents(handler: EventHandler, batch = BATCH, tx: Tx = db): Promise<number> {
  return tx.transaction(async (tx) => {
    // One dispatcher of a handler at a time: an advisory lock, not the cursor row's (FOR UPDATE
    // would give this transaction an id from its first statement, and every dispatcher reads only
    // events older than every running transaction: a handler busy with a batch would hold the others
    // back for all of it; this way only its writes, at the end, count).
    const [lock] = await tx.execute<{ locked: boolean }>(sql`
      select pg_try_advisory_xact_lock(hashtextextended(${`event-handler:${handler.name}`}, 0)) as locked`);
    if (!lock?.locked) return 0;
    // Read after the lock: the cursor as the previous holder committed it, and what follows it, in
    // one statement. A handler's first run creates its cursor, then reads.
    let read = await nextBatch(handler, batch, tx);
    if (read.length === 0) {
      await tx.execute(sql`insert into event_handler_cursors (handler) values (${handler.name}) on conflict do nothing`);
      read = await nextBatch(handler, batch, tx);
    }
    const rows = read.filter((r): r is BatchRow & EventRow => r.id !== null);
    if (rows.length === 0) return 0;
    const wanted = new Set<string>(handler.types);
    const events = rows.filter((r) => wanted.has(r.type)).map(toLoggedEvent);
    if (events.length) await handler.handle(events, tx);
    const last = rows[rows.length - 1]!;
    await tx.execute(sql`update event_handler_cursors set tx_id = ${last.tx_id_text}::xid8, event_id = ${last.id}, updated_at = now()
                         where handler = ${handler.name}`);
    return rows.length;
  });
}

/** A row of nextBatch: an event past the cursor, or nulls when none is (the cursor exists). */
type BatchRow = { [K in keyof EventRow]: EventRow[K] | null } & { tx_id_text: string | null };

/**
 * The events past `handler`'s cursor, in order, at most `batch`, of transactions older than every
 * one still running; no row if it has no cursor, one row of nulls if nothing follows it.
 */
function nextBatch(handler: EventHandler, batch: number, tx: Tx) {
  // The handler this one runs behind: nothing past its cursor (no cursor yet: it has read nothing).
  const bound = handler.after
    ? sql`and (e.tx_id, e.id) <= (select a.tx_id, a.event_id from event_handler_cursors a where a.handler = ${handler.after})`
    : sql``;
  return tx.execute<BatchRow>(sql`
    select e.* from event_handler_cursors c
    left join lateral (
      select e.id, e.business_id, e.type, e.conversation_id, e.message_id, e.client_id, e.actor_type, e.actor_staff_id,
             -- Only what the handler takes is read whole: the rest are only passed.
             case when ${equalsAny(sql`e.type`, handler.types, 'text')} then e.data end as data, e.occurred_at,
             e.tx_id::text as tx_id_text
      from events e
      where (e.tx_id, e.id) > (c.tx_id, c.event_id)
        and e.tx_id < pg_snapshot_xmin(pg_current_snapshot())
        ${bound}
      -- The xid8 column, not its text (as text, 1000 sorts before 999: a batch cut there skips events)
      order by e.tx_id, e.id
      limit ${batch}
    ) e on true
    where c.handler = ${handler.name}`);
}
