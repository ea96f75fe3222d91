import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import {
  MAX_WEBHOOK_DESCRIPTION,
  MAX_WEBHOOK_URL,
  WEBHOOK_DELIVERY_STATUSES,
  type WebhookDeliveryStatus,
} from '../../server/shared/outgoing-webhooks';
import { tenantKeys } from './columns';
import { oneOf, type EventType } from './enums';

/**
 * A business's outgoing webhook endpoints (docs/api.md#webhooks-you-receive-from-us): where the
 * events of its log are POSTed, signed with `secret` (and, for 24 h after a rotation, with
 * `previous_secret` too). `event_types` null means every type. `failing_since` is the first failure
 * of the current run of failures (cleared by any success): five days of it disables the endpoint.
 */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    ...tenantKeys(),
    url: text('url').notNull(),
    description: text('description'),
    eventTypes: text('event_types').array().$type<EventType[]>(),
    enabled: boolean('enabled').notNull().default(true),
    disabledReason: text('disabled_reason'),
    disabledAt: timestamp('disabled_at', { withTimezone: true }),
    secret: text('secret').notNull(),
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true }),
    failingSince: timestamp('failing_since', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('webhook_endpoints_business_id_idx').on(t.businessId, t.id),
    check('webhook_endpoints_url_check', sql`char_length(${t.url}) between 1 and ${sql.raw(String(MAX_WEBHOOK_URL))}`),
    check(
      'webhook_endpoints_description_check',
      sql`${t.description} is null or char_length(${t.description}) <= ${sql.raw(String(MAX_WEBHOOK_DESCRIPTION))}`,
    ),
  ],
);

/**
 * One event to one endpoint: the body as first sent (kept, so every retry and a redelivery send the
 * same bytes), its state and its last attempt. `event_id` is the `webhook-id` (the log's id; a test
 * event takes an id from the log's sequence). `sequence` orders one conversation's events; the
 * sender never starts one while an earlier one of its conversation is pending for that endpoint.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    businessId: integer('business_id').notNull(),
    endpointId: integer('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventId: bigint('event_id', { mode: 'number' }).notNull(),
    eventType: text('event_type').notNull(),
    conversationId: integer('conversation_id'),
    sequence: bigint('sequence', { mode: 'number' }),
    payload: jsonb('payload').$type<{ type: string; timestamp: string; data: Record<string, unknown> }>().notNull(),
    status: text('status').$type<WebhookDeliveryStatus>().notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true }),
    lastStatusCode: integer('last_status_code'),
    lastDurationMs: integer('last_duration_ms'),
    lastError: text('last_error'),
    lastResponseBody: text('last_response_body'),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check('webhook_deliveries_status_check', oneOf(t.status, WEBHOOK_DELIVERY_STATUSES)),
    // The sender's claim: an endpoint's pending deliveries in the log's order. `attempts >= 0` is
    // always true, and only the queries that scan an endpoint's pending deliveries state it
    // (server/services/outgoing-webhooks/deliver.ts): a lookup of one
    // conversation's pending deliveries cannot take this index, only the next one. Statistics that
    // say few are pending (any quiet hour) made the two cost the same, and the planner took this one
    // for those lookups, reading every pending delivery of the endpoint for each: a claim of 2–7 s
    // at 2,000 pending (docs/performance.md#benchwebhooks-out).
    index('webhook_deliveries_pending_idx')
      .on(t.endpointId, t.id)
      .where(sql`${t.status} = 'pending' and ${t.attempts} >= 0`),
    // Order within a conversation: is an earlier one of this endpoint and conversation still pending?
    index('webhook_deliveries_pending_conversation_idx')
      .on(t.endpointId, t.conversationId, t.id)
      .where(sql`${t.status} = 'pending' and ${t.conversationId} is not null`),
    // The delivery log, newest first, per endpoint.
    index('webhook_deliveries_endpoint_idx').on(t.endpointId, t.id),
  ],
);

/**
 * The last sequence number given to each conversation's events, for outgoing webhooks' order. Kept
 * apart from `conversations` so numbering them never waits on a conversation's row lock.
 */
export const conversationEventSequences = pgTable('conversation_event_sequences', {
  // No foreign key: the log outlives a deleted conversation, and numbering its late events must not fail.
  conversationId: integer('conversation_id').primaryKey(),
  lastSequence: bigint('last_sequence', { mode: 'number' }).notNull(),
});
