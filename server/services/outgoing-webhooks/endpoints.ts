import { and, count, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import { webhookDeliveries, webhookEndpoints, type EventType } from '@/db/schema';
import { db, type Tx } from '@/server/db/client';
import { env } from '@/server/env';
import { AppError } from '@/server/errors';
import { checkWebhookUrl } from '@/server/lib/public-post';
import type {
  CreateWebhookEndpointRequest,
  UpdateWebhookEndpointRequest,
  WebhookDeliveryListQuery,
} from '@/server/schemas/outgoing-webhooks';
import { MAX_WEBHOOK_ENDPOINTS, PREVIOUS_SECRET_HOURS } from '@/server/shared/outgoing-webhooks';
import { newWebhookSecret } from './signing';

/**
 * A business's outgoing webhook endpoints and their delivery log (docs/api.md#webhooks-you-receive-from-us),
 * managed over REST and in the inbox's settings. Every query is scoped to the business: another
 * business's endpoint or delivery is a 404. The secret leaves only at creation and rotation.
 */

type EndpointRow = typeof webhookEndpoints.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;

function toEndpoint(r: EndpointRow) {
  return {
    id: r.id,
    business_id: r.businessId,
    url: r.url,
    event_types: r.eventTypes,
    description: r.description,
    enabled: r.enabled,
    disabled_reason: r.disabledReason,
    disabled_at: r.disabledAt?.toISOString() ?? null,
    failing_since: r.failingSince?.toISOString() ?? null,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

function toDelivery(r: DeliveryRow) {
  return {
    id: r.id,
    endpoint_id: r.endpointId,
    event_id: r.eventId,
    event_type: r.eventType,
    status: r.status,
    attempts: r.attempts,
    next_attempt_at: r.status === 'pending' ? r.nextAttemptAt.toISOString() : null,
    last_attempt_at: r.lastAttemptAt?.toISOString() ?? null,
    last_status_code: r.lastStatusCode,
    last_duration_ms: r.lastDurationMs,
    last_error: r.lastError,
    last_response_body: r.lastResponseBody,
    request_body: JSON.stringify(r.payload),
    delivered_at: r.deliveredAt?.toISOString() ?? null,
    created_at: r.createdAt.toISOString(),
  };
}

function assertUrl(url: string): void {
  const problem = checkWebhookUrl(url, env().webhookAllowPrivateUrls);
  if (problem) throw AppError.invalid(['body', 'url'], problem);
}

/** A type list in a stable order without repeats; null (every type) stays null. */
const eventTypesOf = (types: readonly EventType[] | null | undefined) => (types ? [...new Set(types)].sort() : null);

async function loadEndpoint(businessId: number, endpointId: number, lock: boolean, tx: Tx): Promise<EndpointRow> {
  const query = tx
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.businessId, businessId), eq(webhookEndpoints.id, endpointId)));
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw AppError.notFound('Webhook endpoint');
  return row;
}

export async function listWebhookEndpoints(businessId: number, tx: Tx = db) {
  const rows = await tx
    .select()
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.businessId, businessId))
    .orderBy(webhookEndpoints.id);
  return { webhook_endpoints: rows.map(toEndpoint) };
}

export async function getWebhookEndpoint(businessId: number, endpointId: number, tx: Tx = db) {
  return toEndpoint(await loadEndpoint(businessId, endpointId, false, tx));
}

export async function createWebhookEndpoint(
  businessId: number,
  input: z.output<typeof CreateWebhookEndpointRequest>,
  tx: Tx = db,
) {
  assertUrl(input.url);
  return tx.transaction(async (tx) => {
    // The endpoint takes the events that happen from its creation on: those of transactions that
    // start after `created_at`. Taking this transaction's id first, and the time after it, makes
    // each of those have a higher transaction id, so the log's handler cannot read one before this
    // endpoint is visible to it (it reads only below the oldest running transaction).
    await tx.execute(sql`select pg_current_xact_id()`);
    // Counted under the business's advisory lock, so two creations at once cannot both pass the cap.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('webhook_endpoints'), ${businessId})`);
    const [existing] = await tx.select({ n: count() }).from(webhookEndpoints).where(eq(webhookEndpoints.businessId, businessId));
    if (existing!.n >= MAX_WEBHOOK_ENDPOINTS) {
      throw new AppError('conflict', `A business has at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints; delete one first`);
    }
    const [row] = await tx
      .insert(webhookEndpoints)
      .values({
        businessId,
        url: input.url,
        eventTypes: eventTypesOf(input.event_types),
        description: input.description ?? null,
        secret: newWebhookSecret(),
        createdAt: sql`clock_timestamp()`,
      })
      .returning();
    return { ...toEndpoint(row!), secret: row!.secret };
  });
}

export async function updateWebhookEndpoint(
  businessId: number,
  endpointId: number,
  input: z.output<typeof UpdateWebhookEndpointRequest>,
  tx: Tx = db,
) {
  if (input.url !== undefined) assertUrl(input.url);
  return tx.transaction(async (tx) => {
    const current = await loadEndpoint(businessId, endpointId, true, tx);
    const reenabled = input.enabled === true && !current.enabled;
    const [row] = await tx
      .update(webhookEndpoints)
      .set({
        ...(input.url !== undefined && { url: input.url }),
        ...(input.event_types !== undefined && { eventTypes: eventTypesOf(input.event_types) }),
        ...(input.description !== undefined && { description: input.description }),
        ...(input.enabled !== undefined && { enabled: input.enabled }),
        // Disabled by hand: no reason to show but that. Re-enabled: its failing run starts over.
        ...(input.enabled === false && current.enabled && { disabledAt: new Date(), disabledReason: null }),
        ...(reenabled && { disabledAt: null, disabledReason: null, failingSince: null }),
        updatedAt: new Date(),
      })
      .where(eq(webhookEndpoints.id, endpointId))
      .returning();
    return toEndpoint(row!);
  });
}

export async function deleteWebhookEndpoint(businessId: number, endpointId: number, tx: Tx = db) {
  const deleted = await tx
    .delete(webhookEndpoints)
    .where(and(eq(webhookEndpoints.businessId, businessId), eq(webhookEndpoints.id, endpointId)))
    .returning({ id: webhookEndpoints.id });
  if (!deleted.length) throw AppError.notFound('Webhook endpoint');
  return { success: true, endpoint_id: endpointId };
}

/**
 * A new secret; the one it replaces keeps signing beside it for PREVIOUS_SECRET_HOURS, so a receiver
 * has a day to switch without refusing a delivery. A second rotation within that day drops the
 * oldest: at most two secrets sign.
 */
export async function rotateWebhookSecret(businessId: number, endpointId: number, tx: Tx = db) {
  return tx.transaction(async (tx) => {
    const current = await loadEndpoint(businessId, endpointId, true, tx);
    const [row] = await tx
      .update(webhookEndpoints)
      .set({
        secret: newWebhookSecret(),
        previousSecret: current.secret,
        previousSecretExpiresAt: sql`now() + make_interval(hours => ${PREVIOUS_SECRET_HOURS})`,
        updatedAt: new Date(),
      })
      .where(eq(webhookEndpoints.id, endpointId))
      .returning();
    return { ...toEndpoint(row!), secret: row!.secret };
  });
}

/**
 * A `webhook.test` event for one endpoint, delivered like any other (signed, retried, logged). Its
 * id comes from the log's sequence, so `webhook-id` never repeats, though it is not in the log.
 */
export async function sendTestWebhook(businessId: number, endpointId: number, tx: Tx = db) {
  const endpoint = await loadEndpoint(businessId, endpointId, false, tx);
  if (!endpoint.enabled) throw new AppError('conflict', 'The endpoint is disabled; enable it before testing it');
  const [row] = await tx.execute<{ id: number }>(sql`select nextval('events_id_seq')::bigint as id`);
  const [delivery] = await tx
    .insert(webhookDeliveries)
    .values({
      businessId,
      endpointId,
      eventId: row!.id,
      eventType: 'webhook.test',
      payload: {
        type: 'webhook.test',
        timestamp: new Date().toISOString(),
        data: { business_id: businessId, endpoint_id: endpointId },
      },
    })
    .returning();
  await notifyDeliveriesDue(tx);
  return toDelivery(delivery!);
}

export async function listWebhookDeliveries(
  businessId: number,
  endpointId: number,
  q: z.output<typeof WebhookDeliveryListQuery>,
  tx: Tx = db,
) {
  await loadEndpoint(businessId, endpointId, false, tx);
  const conditions: SQL[] = [eq(webhookDeliveries.endpointId, endpointId)];
  if (q.outcome) conditions.push(eq(webhookDeliveries.status, q.outcome));
  // One row more than the page says whether there is a next one (no count of a large log).
  const rows = await tx
    .select()
    .from(webhookDeliveries)
    .where(and(...conditions))
    .orderBy(desc(webhookDeliveries.id))
    .limit(q.page_size + 1)
    .offset((q.page - 1) * q.page_size);
  return {
    deliveries: rows.slice(0, q.page_size).map(toDelivery),
    page: q.page,
    page_size: q.page_size,
    next_page: rows.length > q.page_size,
  };
}

/** Sends a delivery again, now, with a fresh schedule of attempts (the same body and webhook-id). */
export async function redeliverWebhook(businessId: number, endpointId: number, deliveryId: number, tx: Tx = db) {
  const endpoint = await loadEndpoint(businessId, endpointId, false, tx);
  if (!endpoint.enabled) throw new AppError('conflict', 'The endpoint is disabled; enable it before redelivering to it');
  const [row] = await tx
    .update(webhookDeliveries)
    .set({ status: 'pending', attempts: 0, nextAttemptAt: sql`now()` })
    .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.id, deliveryId)))
    .returning();
  if (!row) throw AppError.notFound('Webhook delivery');
  await notifyDeliveriesDue(tx);
  return toDelivery(row);
}

/** Wakes the workers' senders (when the writing transaction commits) for deliveries due now. */
export const WEBHOOK_DELIVERIES_CHANNEL = 'webhook_deliveries_due';
export async function notifyDeliveriesDue(tx: Tx = db): Promise<void> {
  await tx.execute(sql`select pg_notify(${WEBHOOK_DELIVERIES_CHANNEL}, '')`);
}
