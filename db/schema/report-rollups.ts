import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  date,
  doublePrecision,
  index,
  integer,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { businesses } from './businesses';
import { sameBusinessFk } from './columns';
import { conversations } from './conversations';
import type { Channel } from './enums';

/**
 * Reports' rollups (docs/architecture.md#reports): what a report sums instead of reading every row
 * of its range. Written only by the `reports` handler and its backfill
 * (server/services/reports/rollups.ts), in the same transaction as the rows they sum, from the
 * changes of those rows (a row removed counts −1, a row written +1), so they stay exact whatever
 * order events come in.
 *
 * Days and weeks (Monday first) are the business's, in its time zone; a location with a zone of its
 * own also has its rows counted in that zone (`local`), for reports asked for that location. Which
 * zones they were counted in is kept in report_rollups: when a zone changes, a report reads the
 * rows themselves until the backfill has counted them again.
 *
 * A dimension kept as none is 0 (a location id, a staff id) or '' (a channel): the unique keys stay
 * plain (no NULL in them).
 */

/** Per business: the zones the rollups are counted in, and how far the backfill got counting them again. */
export const reportRollups = pgTable('report_rollups', {
  businessId: integer('business_id')
    .primaryKey()
    .references(() => businesses.id, { onDelete: 'cascade' }),
  /** The zones counted in: the business's, and each location with another (server/services/reports/zones.ts). */
  zones: text('zones').notNull(),
  /** Every row is counted: reports read the rollups. */
  ready: boolean('ready').notNull(),
  /** While not ready: the backfill has counted every row dated before this (null: none yet). */
  builtUntil: timestamp('built_until', { withTimezone: true }),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Counts per day for the volume report: cycles opened (by their start, nobody's), resolved (by the
 * resolution, the resolver's), messages in and out (by sent_at, the sender's), per location, staff
 * member and channel.
 */
export const reportDayCounts = pgTable(
  'report_day_counts',
  {
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    /** Counted in the location's own zone (a location whose zone is not the business's), not the business's. */
    local: boolean('local').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    locationId: integer('location_id').notNull(),
    staffId: integer('staff_id').notNull(),
    channel: text('channel').$type<Channel | ''>().notNull(),
    opened: integer('opened').notNull().default(0),
    resolved: integer('resolved').notNull().default(0),
    messagesIn: integer('messages_in').notNull().default(0),
    messagesOut: integer('messages_out').notNull().default(0),
  },
  (t) => [uniqueIndex('report_day_counts_key').on(t.businessId, t.local, t.day, t.locationId, t.staffId, t.channel)],
);

/**
 * Histograms of the time figures: how many values fell in each bucket (report_bucket: 64 per
 * doubling) per day or week and per dimensions kept (`dims`: 1 location, 2 staff, 4 channel; 0 none,
 * 7 all three — weeks only). A median is found by summing buckets to the one its rank falls in, then
 * reading that bucket's few values from report_cycles or report_replies.
 */
export const reportHistograms = pgTable(
  'report_histograms',
  {
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    local: boolean('local').notNull(),
    dims: smallint('dims').notNull(),
    /** A week (period is its Monday) or a day. */
    week: boolean('week').notNull(),
    period: date('period', { mode: 'string' }).notNull(),
    figure: text('figure').$type<'first_response' | 'reply' | 'resolution'>().notNull(),
    /** Business seconds, or wall-clock seconds. */
    business: boolean('business').notNull(),
    locationId: integer('location_id').notNull(),
    staffId: integer('staff_id').notNull(),
    channel: text('channel').$type<Channel | ''>().notNull(),
    bucket: integer('bucket').notNull(),
    n: integer('n').notNull(),
  },
  (t) => [
    uniqueIndex('report_histograms_key').on(
      t.businessId,
      t.local,
      t.dims,
      t.week,
      t.period,
      t.figure,
      t.business,
      t.locationId,
      t.staffId,
      t.channel,
      t.bucket,
    ),
    check('report_histograms_figure_check', sql`${t.figure} in ('first_response', 'reply', 'resolution')`),
  ],
);

/**
 * Each day's and each week's time figures, exact (percentile_cont over that period's rows), in the
 * business's zone: a report by day or by week reads its whole periods here. Counted again from the
 * rows for every period a recount changes, and by the backfill.
 */
export const reportPeriodStats = pgTable(
  'report_period_stats',
  {
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    /** A week (period is its Monday) or a day. */
    week: boolean('week').notNull(),
    period: date('period', { mode: 'string' }).notNull(),
    figure: text('figure').$type<'first_response' | 'reply' | 'resolution'>().notNull(),
    count: integer('count').notNull(),
    medianSeconds: doublePrecision('median_seconds').notNull(),
    p90Seconds: doublePrecision('p90_seconds').notNull(),
    medianBusinessSeconds: doublePrecision('median_business_seconds').notNull(),
    p90BusinessSeconds: doublePrecision('p90_business_seconds').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.businessId, t.week, t.period, t.figure] }),
    check('report_period_stats_figure_check', sql`${t.figure} in ('first_response', 'reply', 'resolution')`),
  ],
);

/**
 * The messages the volume report counts (not notes, not scheduled or canceled), as counted: one row
 * each, so a message's change (a scheduled one sent, a queued one canceled) is counted once, whatever
 * events say it, and a partial day at either end of a range is read here.
 */
export const reportMessages = pgTable(
  'report_messages',
  {
    messageId: bigint('message_id', { mode: 'number' }).primaryKey(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    conversationId: integer('conversation_id').notNull(),
    /** The conversation's location when the message was counted. */
    locationId: integer('location_id'),
    staffId: integer('staff_id'),
    channel: text('channel').$type<Channel>().notNull(),
    inbound: boolean('inbound').notNull(),
    sentAt: timestamp('sent_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    index('report_messages_business_sent_idx').on(t.businessId, t.sentAt, t.locationId, t.staffId, t.channel, t.inbound),
    index('report_messages_conversation_idx').on(t.businessId, t.conversationId),
    sameBusinessFk('report_messages_conversation_fk', t.businessId, t.conversationId, conversations).onDelete('cascade'),
  ],
);
