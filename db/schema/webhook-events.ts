import { check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { businesses } from './businesses';
import { bytea } from './columns';
import { WEBHOOK_OUTCOMES, oneOf, type WebhookOutcome } from './enums';

/**
 * Every provider webhook, stored raw before it is processed: the dedupe key (MessageSid,
 * CallSid+status, sg_event_id…) makes a redelivery a no-op, and a failed processing stays visible
 * and retryable.
 */
export const webhookEvents = pgTable(
  'webhook_events',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    provider: text('provider').notNull(),
    kind: text('kind').notNull(),
    dedupeKey: text('dedupe_key').notNull(),
    businessId: integer('business_id').references(() => businesses.id, { onDelete: 'set null' }),
    headers: jsonb('headers').$type<Record<string, string>>().notNull().default({}),
    payload: jsonb('payload').$type<unknown>().notNull(),
    /**
     * The request body exactly as received, kept when the parsed payload had to be cleaned to be
     * storable (U+0000, lone surrogates: server/lib/pg-text.ts), so nothing a provider sent is lost.
     */
    rawBody: bytea('raw_body'),
    outcome: text('outcome').$type<WebhookOutcome>().notNull().default('pending'),
    error: text('error'),
    attempts: integer('attempts').notNull().default(0),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    processedAt: timestamp('processed_at', { withTimezone: true }),
    /** Processing claimed until then (the endpoint, a redelivery, the sweep or the retry job). */
    processingUntil: timestamp('processing_until', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('webhook_events_dedupe_key').on(t.provider, t.kind, t.dedupeKey),
    index('webhook_events_outcome_idx').on(t.outcome, t.receivedAt),
    check('webhook_events_outcome_check', oneOf(t.outcome, WEBHOOK_OUTCOMES)),
  ],
);
