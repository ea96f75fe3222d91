import { bigint, check, doublePrecision, index, integer, pgTable, text, timestamp, type AnyPgColumn } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { businesses } from './businesses';
import { sameBusinessFk } from './columns';
import { conversations } from './conversations';
import type { Channel } from './enums';

/**
 * Reports' durable figures (docs/api.md#reports, docs/architecture.md#reports): written only by the
 * event log's `reports` handler (server/services/reports/handler.ts), in the dispatcher's
 * transaction, by recounting the conversations a batch touched from their messages and status
 * history (conversation_activities) — the same code recounts history that predates the handler. The
 * log is pruned; these rows last as long as their conversation. Every time figure is stored in wall
 * seconds and in business seconds of the conversation's location, computed when the row is written
 * (a business-seconds figure costs ~46 µs of JavaScript: computed at read time, 100,000 cycles
 * would take seconds), so a report is one indexed range read and SQL percentiles.
 *
 * Staff ids are copied, with no foreign key: a figure outlives nothing it names.
 *
 * Percentiles are read from per-day and per-week histograms (./report-rollups.ts) and, for the few
 * values of the one bucket a rank falls in, from these rows: each time figure has an index on
 * (business_id, report_bucket(value), value), with the time and the figure's dimensions as trailing
 * columns, so that read is index-only and in order: it stops at the rank it wants. report_bucket (migration 0044) is the value's
 * histogram bucket: monotone in the value, 64 per doubling.
 */

/** The histogram bucket of a time figure, as the indexes below and the histograms compute it. */
export const reportBucket = (value: AnyPgColumn) => sql`report_bucket(${value})`;

/** One conversation cycle: from the client's first text or email while none is open to its resolution. */
export const reportCycles = pgTable(
  'report_cycles',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    conversationId: integer('conversation_id').notNull(),
    /** The conversation's location when the cycle was counted (null: none, the business's hours). */
    locationId: integer('location_id'),
    /** The channel of the client's first message of the cycle (`sms` or `email`). */
    channel: text('channel').$type<Channel>().notNull(),
    startMessageId: bigint('start_message_id', { mode: 'number' }).notNull(),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
    /** Texts and emails from the client in the cycle, and staff replies. */
    clientMessages: integer('client_messages').notNull(),
    replies: integer('replies').notNull(),
    firstReplyMessageId: bigint('first_reply_message_id', { mode: 'number' }),
    firstReplyAt: timestamp('first_reply_at', { withTimezone: true }),
    firstReplyStaffId: integer('first_reply_staff_id'),
    firstResponseSeconds: doublePrecision('first_response_seconds'),
    firstResponseBusinessSeconds: doublePrecision('first_response_business_seconds'),
    resolvedAt: timestamp('resolved_at', { withTimezone: true }),
    resolvedByStaffId: integer('resolved_by_staff_id'),
    resolutionSeconds: doublePrecision('resolution_seconds'),
    resolutionBusinessSeconds: doublePrecision('resolution_business_seconds'),
    /**
     * Where the recount of an open cycle resumes (./server/services/reports/recount.ts): the last
     * client message or reply it counted, and the client's message still waiting for a reply then
     * (null: none). A later message is counted from here, not from the cycle's start.
     */
    lastMessageAt: timestamp('last_message_at', { withTimezone: true }),
    lastMessageId: bigint('last_message_id', { mode: 'number' }),
    waitingMessageId: bigint('waiting_message_id', { mode: 'number' }),
    waitingSince: timestamp('waiting_since', { withTimezone: true }),
    waitingChannel: text('waiting_channel').$type<Channel>(),
  },
  (t) => [
    // Every report reads a business's cycles by the day they started (edges of a range, volumes).
    index('report_cycles_business_started_idx').on(t.businessId, t.startedAt),
    // Resolutions counted in volumes, by the day they happened.
    index('report_cycles_business_resolved_idx')
      .on(t.businessId, t.resolvedAt)
      .where(sql`${t.resolvedAt} is not null`),
    // The recount finds a conversation's cycles (the open one, the last resolution).
    index('report_cycles_conversation_idx').on(t.businessId, t.conversationId, t.startedAt),
    // The values of one histogram bucket of each time figure, in order (index-only).
    index('report_cycles_first_response_bucket_idx')
      .on(
        t.businessId,
        reportBucket(t.firstResponseSeconds),
        t.firstResponseSeconds,
        t.startedAt,
        t.locationId,
        t.firstReplyStaffId,
        t.channel,
      )
      .where(sql`${t.firstResponseSeconds} is not null`),
    index('report_cycles_first_response_business_bucket_idx')
      .on(
        t.businessId,
        reportBucket(t.firstResponseBusinessSeconds),
        t.firstResponseBusinessSeconds,
        t.startedAt,
        t.locationId,
        t.firstReplyStaffId,
        t.channel,
      )
      .where(sql`${t.firstResponseBusinessSeconds} is not null`),
    index('report_cycles_resolution_bucket_idx')
      .on(
        t.businessId,
        reportBucket(t.resolutionSeconds),
        t.resolutionSeconds,
        t.startedAt,
        t.locationId,
        t.resolvedByStaffId,
        t.channel,
      )
      .where(sql`${t.resolutionSeconds} is not null`),
    index('report_cycles_resolution_business_bucket_idx')
      .on(
        t.businessId,
        reportBucket(t.resolutionBusinessSeconds),
        t.resolutionBusinessSeconds,
        t.startedAt,
        t.locationId,
        t.resolvedByStaffId,
        t.channel,
      )
      .where(sql`${t.resolutionBusinessSeconds} is not null`),
    sameBusinessFk('report_cycles_conversation_fk', t.businessId, t.conversationId, conversations).onDelete('cascade'),
    check('report_cycles_channel_check', sql`${t.channel} in ('sms', 'email')`),
    check('report_cycles_waiting_channel_check', sql`${t.waitingChannel} is null or ${t.waitingChannel} in ('sms', 'email')`),
  ],
);

/** One reply time: the client's first unanswered text or email of a cycle → the next staff reply. */
export const reportReplies = pgTable(
  'report_replies',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    cycleId: bigint('cycle_id', { mode: 'number' })
      .notNull()
      .references(() => reportCycles.id, { onDelete: 'cascade' }),
    conversationId: integer('conversation_id').notNull(),
    locationId: integer('location_id'),
    /** The channel of the client's message that waited. */
    channel: text('channel').$type<Channel>().notNull(),
    waitingMessageId: bigint('waiting_message_id', { mode: 'number' }).notNull(),
    waitingSince: timestamp('waiting_since', { withTimezone: true }).notNull(),
    replyMessageId: bigint('reply_message_id', { mode: 'number' }).notNull(),
    repliedAt: timestamp('replied_at', { withTimezone: true }).notNull(),
    staffId: integer('staff_id'),
    seconds: doublePrecision('seconds').notNull(),
    businessSeconds: doublePrecision('business_seconds').notNull(),
  },
  (t) => [
    index('report_replies_business_waiting_idx').on(t.businessId, t.waitingSince),
    index('report_replies_cycle_idx').on(t.cycleId),
    index('report_replies_bucket_idx').on(
      t.businessId,
      reportBucket(t.seconds),
      t.seconds,
      t.waitingSince,
      t.locationId,
      t.staffId,
      t.channel,
    ),
    index('report_replies_business_bucket_idx').on(
      t.businessId,
      reportBucket(t.businessSeconds),
      t.businessSeconds,
      t.waitingSince,
      t.locationId,
      t.staffId,
      t.channel,
    ),
  ],
);

/** An inbound call nobody answered (missed, or a voicemail left), and how it was answered. */
export const reportMissedCalls = pgTable(
  'report_missed_calls',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    conversationId: integer('conversation_id').notNull(),
    locationId: integer('location_id'),
    callMessageId: bigint('call_message_id', { mode: 'number' }).notNull(),
    calledAt: timestamp('called_at', { withTimezone: true }).notNull(),
    /** `missed` or `voicemail` (messages.call_outcome). */
    outcome: text('outcome').$type<'missed' | 'voicemail'>().notNull(),
    answeredMessageId: bigint('answered_message_id', { mode: 'number' }),
    answeredAt: timestamp('answered_at', { withTimezone: true }),
    /** `call` (called back), `sms` or `email` (a staff reply). */
    answeredBy: text('answered_by').$type<'call' | 'sms' | 'email'>(),
    answeredStaffId: integer('answered_staff_id'),
    seconds: doublePrecision('seconds'),
    businessSeconds: doublePrecision('business_seconds'),
  },
  (t) => [
    index('report_missed_calls_business_called_idx').on(t.businessId, t.calledAt),
    index('report_missed_calls_conversation_idx').on(t.businessId, t.conversationId, t.calledAt),
    sameBusinessFk('report_missed_calls_conversation_fk', t.businessId, t.conversationId, conversations).onDelete('cascade'),
    check('report_missed_calls_outcome_check', sql`${t.outcome} in ('missed', 'voicemail')`),
    check('report_missed_calls_answered_by_check', sql`${t.answeredBy} is null or ${t.answeredBy} in ('call', 'sms', 'email')`),
  ],
);
