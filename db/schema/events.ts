import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, jsonb, pgSequence, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { xid8 } from './columns';
import { EVENT_ACTOR_TYPES, EVENT_TYPES, oneOf, type EventActorType, type EventType } from './enums';

export const eventIds = pgSequence('events_id_seq', { startWith: 1 });

/**
 * The event log (docs/architecture.md#event-log): one row per change, written in the transaction
 * of the change by the service that owns it (server/services/events/). It is for delivery and
 * replay (live streams that resume, outgoing webhooks, the handlers of later features), kept
 * EVENT_RETENTION_DAYS: what must last longer is kept by the handlers in their own tables.
 *
 * Partitioned by day on `occurred_at` (migration 0024): retention drops whole partitions, so
 * pruning never deletes row by row or holds a long lock. The primary key therefore includes
 * `occurred_at`; `id` alone is unique by its sequence and orders the log.
 */
export const events = pgTable(
  'events',
  {
    id: bigint('id', { mode: 'number' })
      .notNull()
      .default(sql`nextval('events_id_seq')`),
    businessId: integer('business_id').notNull(),
    type: text('type').$type<EventType>().notNull(),
    conversationId: integer('conversation_id'),
    messageId: bigint('message_id', { mode: 'number' }),
    clientId: integer('client_id'),
    actorType: text('actor_type').$type<EventActorType>().notNull(),
    /** The staff member who made the change, for actor `staff` (and `api` with a staff_id). */
    actorStaffId: integer('actor_staff_id'),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull().defaultNow(),
    /**
     * The writing transaction: handlers read the log in (tx_id, id) order, below the oldest
     * transaction still running, so an event that commits late is never skipped
     * (server/services/events/dispatch.ts).
     */
    txId: xid8('tx_id')
      .notNull()
      .default(sql`pg_current_xact_id()`),
  },
  (t) => [
    primaryKey({ columns: [t.id, t.occurredAt] }),
    // A business's events in the log's reading order: a live stream resuming after its last event
    // reads them from here (server/realtime/backlog.ts).
    index('events_business_tx_idx').on(t.businessId, t.txId, t.id),
    // The handlers' reading order.
    index('events_tx_id_idx').on(t.txId, t.id),
    check('events_type_check', oneOf(t.type, EVENT_TYPES)),
    check('events_actor_type_check', oneOf(t.actorType, EVENT_ACTOR_TYPES)),
  ],
);

/** Where each event handler has read the log to: the (tx_id, id) of the last event it was given. */
export const eventHandlerCursors = pgTable('event_handler_cursors', {
  handler: text('handler').primaryKey(),
  txId: xid8('tx_id')
    .notNull()
    .default(sql`'0'::xid8`),
  eventId: bigint('event_id', { mode: 'number' }).notNull().default(0),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
