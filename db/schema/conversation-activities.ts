import { bigint, check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { ACTIVITY_TYPES, type ActivityType } from '../../server/shared/activity';
import { businesses } from './businesses';
import { sameBusinessFk } from './columns';
import { conversations } from './conversations';
import { EVENT_ACTOR_TYPES, oneOf, type EventActorType } from './enums';

/**
 * The timeline's activity lines (docs/architecture.md#event-log): who assigned, resolved, snoozed,
 * labeled a conversation, opted its client out or in, recorded their consent, and when. Written only
 * by the event log's activity handler (server/services/activity/handler.ts), in the dispatcher's
 * transaction, from the events of those changes: the log itself is pruned after its retention, these
 * lines are kept as long as their conversation (deleted with it). One line per event and
 * conversation: an opt-out of an address shared by several clients is a line in each of their
 * conversations.
 */
export const conversationActivities = pgTable(
  'conversation_activities',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    conversationId: integer('conversation_id').notNull(),
    /** The event it was made from: a handler run twice over one event writes nothing more. */
    eventId: bigint('event_id', { mode: 'number' }).notNull(),
    type: text('type').$type<ActivityType>().notNull(),
    actorType: text('actor_type').$type<EventActorType>().notNull(),
    /** The staff member who acted, as the event names them: no foreign key, so the line outlives nothing it names. */
    actorStaffId: integer('actor_staff_id'),
    /** The event's data (server/services/events/types.ts), as logged. */
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex('conversation_activities_event_key').on(t.eventId, t.conversationId),
    // The timeline's read: a conversation's lines, newest first, from a time on.
    index('conversation_activities_conversation_idx').on(t.businessId, t.conversationId, t.occurredAt.desc(), t.id.desc()),
    sameBusinessFk('conversation_activities_conversation_fk', t.businessId, t.conversationId, conversations).onDelete('cascade'),
    check('conversation_activities_type_check', oneOf(t.type, ACTIVITY_TYPES)),
    check('conversation_activities_actor_type_check', oneOf(t.actorType, EVENT_ACTOR_TYPES)),
  ],
);
