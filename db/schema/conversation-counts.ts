import { check, index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { oneOf } from './enums';

/**
 * What the filter counts (GET /conversations/filters) count, one key per conversation and dimension
 * (docs/architecture.md#kept-counts). `value` is the conversation's value in that dimension as text:
 * `status` the status, `assignee` the staff id ('' unassigned), `channel` the last channel,
 * `location` the location id, `label` the label; `unread`, `flagged` and `possible_opt_out` are ''
 * when the conversation has any. A conversation with no value in a dimension (no channel yet, no
 * label) has no key there. In SQL (migration 0016) conversation_count_dimensions() lists these and
 * conversation_count_values() gives a conversation's values; the triggers on `conversations` use them.
 */
export const COUNT_DIMENSIONS = [
  'status',
  'assignee',
  'channel',
  'location',
  'label',
  'unread',
  'flagged',
  'possible_opt_out',
] as const;
export type CountDimension = (typeof COUNT_DIMENSIONS)[number];

/** A count (or a change to one) of a business's conversations under one key. */
const countColumns = () => ({
  businessId: integer('business_id').notNull(),
  dimension: text('dimension').$type<CountDimension>().notNull(),
  value: text('value').notNull(),
  n: integer('n').notNull(),
});

/**
 * The kept counts: per business, dimension and value, how many conversations have it, as of the
 * last compaction. Written only by compactConversationCounts (server/services/conversations/counts.ts),
 * one compaction at a time; a key that falls to 0 is deleted. The current count of a key is its `n`
 * here plus the `n` of its pending deltas.
 */
export const conversationCounts = pgTable('conversation_counts', countColumns(), (t) => [
  primaryKey({ name: 'conversation_counts_pkey', columns: [t.businessId, t.dimension, t.value] }),
  check('conversation_counts_dimension_check', oneOf(t.dimension, COUNT_DIMENSIONS)),
]);

/**
 * Changes to the kept counts not yet folded into `conversation_counts`: inserted by the triggers on
 * `conversations` in the transaction that changes the rows (so they commit or roll back with it),
 * only ever inserted by writers (no row is updated, so concurrent writers never wait on each other
 * here), and moved into `conversation_counts` by the compaction. No foreign key to `businesses`:
 * deleting a business deletes its conversations, whose trigger then writes −1s for it; the
 * compaction nets them out against the kept rows and deletes both.
 */
export const conversationCountDeltas = pgTable('conversation_count_deltas', countColumns(), (t) => [
  index('conversation_count_deltas_business_idx').on(t.businessId),
  check('conversation_count_deltas_dimension_check', oneOf(t.dimension, COUNT_DIMENSIONS)),
]);
