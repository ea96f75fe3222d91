import { createHash } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { webhookEvents, type WebhookOutcome } from '@/db/schema';
import { enqueue } from '@/server/jobs/enqueue';
import { QUEUES } from '@/server/jobs/queues';
import { logger } from '@/server/logger';

/**
 * Every webhook is stored raw before it is processed (docs/api.md#webhook-storage-and-dedupe): the row's unique
 * (provider, kind, dedupe_key) makes a redelivery a no-op, and its outcome shows what became of it.
 */
export type WebhookKind = 'sms_incoming' | 'sms_status' | 'voice_status' | 'voice_recording' | 'sendgrid_event' | 'email_inbound';

const KEPT_HEADERS = [
  'content-type',
  'user-agent',
  'x-twilio-signature',
  'i-twilio-idempotency-token',
  'x-twilio-email-event-webhook-timestamp',
  'x-request-id',
];

export function headersWorthKeeping(req: Request): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = req.headers.get(name);
    // Header values are byte strings (no U+0000, no surrogates): only their length needs a bound.
    if (value !== null) kept[name] = value.slice(0, 1000);
  }
  return kept;
}

/**
 * A dedupe key as stored: a provider id as it is, anything longer than a real id could be (a
 * hostile or broken sender) by its SHA-256, so the unique index never meets an oversized key.
 */
export const storedDedupeKey = (key: string) =>
  key.length <= 200 ? key : `sha256:${createHash('sha256').update(key).digest('hex')}`;

/** How long one processing of an event may hold it; past that its holder is taken for dead. */
export const EVENT_LEASE_SECONDS = 30;
const lease = () => sql`now() + make_interval(secs => ${EVENT_LEASE_SECONDS})`;
const claimable = sql`${webhookEvents.outcome} in ('pending', 'failed') and (${webhookEvents.processingUntil} is null or ${webhookEvents.processingUntil} < now())`;

/**
 * Inserts the event, claimed for processing by the caller; `null` when there is nothing for the
 * caller to do: the same event was already received and processed, or is being processed right
 * now. A redelivery of an event that was stored but never processed (its processor died, or the
 * database failed under it) takes the event over and processes it. `rawBody`: the exact request
 * bytes, passed when the payload had to be cleaned to be storable.
 */
export async function storeEvent(
  input: {
    provider: string;
    kind: WebhookKind;
    dedupeKey: string;
    headers: Record<string, string>;
    payload: unknown;
    rawBody?: Buffer | null;
    businessId?: number | null;
  },
  tx: Tx = db,
): Promise<number | null> {
  const [row] = await tx
    .insert(webhookEvents)
    .values({
      provider: input.provider,
      kind: input.kind,
      dedupeKey: storedDedupeKey(input.dedupeKey),
      headers: input.headers,
      payload: input.payload,
      rawBody: input.rawBody ?? null,
      businessId: input.businessId ?? null,
      processingUntil: lease(),
    })
    .onConflictDoUpdate({
      target: [webhookEvents.provider, webhookEvents.kind, webhookEvents.dedupeKey],
      set: { processingUntil: lease() },
      setWhere: claimable,
    })
    .returning({ id: webhookEvents.id });
  return row?.id ?? null;
}

/** Claims a stored event for processing (the retry job, the sweep); null when done or held. */
export async function claimEvent(id: number, tx: Tx = db) {
  const [row] = await tx
    .update(webhookEvents)
    .set({ processingUntil: lease() })
    .where(and(eq(webhookEvents.id, id), claimable))
    .returning();
  return row ?? null;
}

/** Records an outcome and releases the event's claim. */
export async function markEvent(
  id: number,
  outcome: WebhookOutcome,
  details: { error?: string | null; businessId?: number | null } = {},
  tx: Tx = db,
) {
  await tx
    .update(webhookEvents)
    .set({
      outcome,
      error: details.error ?? null,
      businessId: details.businessId ?? undefined,
      processedAt: outcome === 'pending' ? null : sql`now()`,
      attempts: sql`${webhookEvents.attempts} + 1`,
      processingUntil: null,
    })
    .where(eq(webhookEvents.id, id));
}

/** A processing attempt that threw: counted, its error kept, the claim released; the outcome stays. */
export async function releaseEvent(id: number, err: unknown, tx: Tx = db) {
  await tx
    .update(webhookEvents)
    .set({ error: failureReason(err), attempts: sql`${webhookEvents.attempts} + 1`, processingUntil: null })
    .where(eq(webhookEvents.id, id));
}

/**
 * Runs a stored event's processing. A failure is recorded on the event (`failed`, with the
 * error) and handed to the webhook retry job; the caller still answers the provider 200. If even
 * that cannot be written (the database is down), the event stays stored and unprocessed, and the
 * worker's sweep (server/services/recovery.ts) processes it once its claim lapses.
 */
export async function processOrRetry(
  eventId: number,
  kind: WebhookKind,
  process: () => Promise<void>,
  tx: Tx = db,
): Promise<void> {
  try {
    await process();
  } catch (err) {
    logger.error({ err, event_id: eventId, kind }, 'webhook processing failed; will retry');
    await markEvent(eventId, 'failed', { error: failureReason(err) }, tx).catch(() => {});
    await enqueue(tx, QUEUES.webhookRetry, [{ data: { eventId }, startAfterSeconds: 5 }]).catch((e) =>
      logger.error({ err: e, event_id: eventId }, 'could not enqueue webhook retry; the sweep will process the event'),
    );
  }
}

/**
 * What went wrong, for the event row: the database's own reason (drizzle wraps it, and its message
 * carries the SQL and the bound values, which may be personal data), never the parameters.
 */
export function failureReason(err: unknown): string {
  const cause = (err as { cause?: { message?: string; code?: string } }).cause;
  const message = cause?.message
    ? `${cause.code ? `${cause.code}: ` : ''}${cause.message}`
    : ((err as Error)?.message ?? String(err));
  return message.split('\nparams:')[0]!.slice(0, 500);
}
