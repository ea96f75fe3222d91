import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { env } from '@/server/env';
import { maintainEventPartitions } from '@/server/services/events/partitions';
import { deleteUnattachedUploads } from '@/server/services/messages/uploads';
import { pruneNotifications } from '@/server/services/notifications/prune';
import { pruneWebhookDeliveries } from '@/server/services/outgoing-webhooks/deliver';

/**
 * Housekeeping the worker runs every few minutes (the `system.maintenance` job): expired
 * idempotency keys (24 h), rate-limit windows long past, sessions that ended more than a week ago,
 * MMS uploads no message named within a day of their upload (docs/api.md#mms-uploads), and the
 * event log's partitions (created ahead, dropped past EVENT_RETENTION_DAYS) and the outgoing
 * webhooks' delivery log past the same age; read notifications and waiting digests past 90 days,
 * and the notifications handler's marks of events the log no longer holds.
 */
export async function runMaintenance(tx: Tx = db) {
  return {
    ...(await sweepExpiredRows(tx)),
    uploads: await deleteUnattachedUploads(undefined, tx),
    events: await maintainEventPartitions(env().eventRetentionDays, undefined, tx),
    webhookDeliveries: await pruneWebhookDeliveries(env().eventRetentionDays, undefined, tx),
    notifications: await pruneNotifications(undefined, undefined, tx),
  };
}

/** The expired rows of runMaintenance. */
export async function sweepExpiredRows(tx: Tx = db) {
  const idempotency = await tx.execute(sql`delete from idempotency_keys where expires_at < now()`);
  const buckets = await tx.execute(sql`delete from rate_limit_buckets where window_start < now() - interval '5 minutes'`);
  const sessions = await tx.execute(sql`delete from sessions where coalesce(revoked_at, expires_at) < now() - interval '7 days'`);
  return { idempotencyKeys: idempotency.count, rateLimitBuckets: buckets.count, sessions: sessions.count };
}
