import { createSql } from '@/db/connect';
import type { Env } from '@/server/env';
import { postWebhook, WebhookPolicy, type WebhookResult } from '@/server/lib/public-post';
import type { Logger } from '@/server/logger';
import { dispatchEvents } from '@/server/services/events/dispatch';
import { EVENT_HANDLERS } from '@/server/services/events/handlers';
import {
  claimDueDeliveries,
  extendLeases,
  LEASE_SECONDS,
  recordAttempts,
  webhookHeaders,
  type AttemptOutcome,
  type ClaimedDelivery,
} from '@/server/services/outgoing-webhooks/deliver';
import { WEBHOOK_DELIVERIES_CHANNEL } from '@/server/services/outgoing-webhooks/endpoints';
import { wakeableLoop } from './wakeable-loop';

/**
 * The worker's side of the event log and outgoing webhooks (docs/architecture.md#event-log):
 *
 * - the dispatcher hands each registered handler the log's new events, woken by `events_appended`
 *   (migration 0028) and every second in case a wake-up was missed;
 * - the sender POSTs due deliveries, many at once, woken when deliveries are created or redelivered
 *   and as requests finish, and every second for retries coming due. It keeps at most
 *   MAX_IN_FLIGHT requests going, at most PER_ENDPOINT of them to one endpoint, so a slow or dead
 *   endpoint holds its own share of the worker, never the others'; sending and the inbox never wait
 *   for any of it. Outcomes are written in batches as they come.
 */

const IDLE_MS = 1_000;
export const MAX_IN_FLIGHT = 256;
export const PER_ENDPOINT = 32;
/** Outcomes are written when this many are waiting, or FLUSH_MS after the first one arrived. */
const FLUSH_SIZE = 200;
const FLUSH_MS = 20;

export type Poster = (url: string, body: string, headers: Record<string, string>) => Promise<WebhookResult>;

export function startOutgoingWebhooks(config: Env, log: Logger, poster?: Poster) {
  // One policy for the process: its keep-alive connections are shared by every delivery.
  const policy = poster
    ? null
    : new WebhookPolicy({ allowPrivate: config.webhookAllowPrivateUrls, maxSocketsPerOrigin: PER_ENDPOINT });
  const post: Poster = poster ?? ((url, body, headers) => postWebhook(url, body, headers, policy!));
  const sender = startSender(post, log);
  const dispatcher = wakeableLoop(
    async () => {
      let more = false;
      for (const handler of EVENT_HANDLERS) {
        // A full batch means there may be more: run again at once. One handler failing (its batch
        // and cursor rolled back, tried again next round) does not hold up the others.
        try {
          if ((await dispatchEvents(handler)) > 0) more = true;
        } catch (err) {
          log.warn({ err: { message: (err as Error).message }, handler: handler.name }, 'event dispatch failed');
        }
      }
      if (more) sender.wake();
      return more;
    },
    IDLE_MS,
    (err) => log.warn({ err: { message: (err as Error).message } }, 'event dispatch failed'),
  );
  // LISTEN needs a session of its own (DATABASE_LISTEN_URL when DATABASE_URL is a pooler).
  const listener = createSql(config.databaseListenUrl!, { max: 1, idle_timeout: 0 });
  void listener
    .listen('events_appended', () => dispatcher.wake())
    .catch((err) => log.warn({ err }, 'LISTEN events_appended failed'));
  void listener
    .listen(WEBHOOK_DELIVERIES_CHANNEL, () => sender.wake())
    .catch((err) => log.warn({ err }, `LISTEN ${WEBHOOK_DELIVERIES_CHANNEL} failed`));
  return {
    wake: () => dispatcher.wake(),
    async stop() {
      await dispatcher.stop();
      await sender.stop();
      policy?.close();
      await listener.end({ timeout: 5 });
    },
  };
}

function startSender(post: Poster, log: Logger) {
  const inFlight = new Map<number, number>();
  let total = 0;
  const pending: AttemptOutcome[] = [];
  // Claimed and not yet recorded: their leases are renewed while they are ours, so a worker that is
  // slow to record an answer (a busy machine) never lets another claim send them again.
  const unrecorded = new Set<number>();
  const renewal = setInterval(
    () => {
      if (unrecorded.size === 0) return;
      extendLeases([...unrecorded]).catch((err: Error) =>
        log.warn({ err: { message: err.message } }, 'could not renew webhook delivery leases'),
      );
    },
    (LEASE_SECONDS * 1000) / 3,
  );
  let flushTimer: NodeJS.Timeout | null = null;
  let flushing: Promise<void> = Promise.resolve();

  function flush() {
    if (flushTimer) clearTimeout(flushTimer);
    flushTimer = null;
    const batch = pending.splice(0);
    if (!batch.length) return flushing;
    // One write at a time; a failed write is retried (the outcomes stay ours until written).
    flushing = flushing.then(async () => {
      for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
        try {
          await recordAttempts(batch);
          for (const outcome of batch) unrecorded.delete(outcome.deliveryId);
          break;
        } catch (err) {
          log.warn({ err: { message: (err as Error).message } }, 'could not record webhook attempts; retrying');
          await new Promise((r) => setTimeout(r, delay));
        }
      }
      // Capacity and order: a conversation's next event is due once this one is written.
      loop.wake();
    });
    return flushing;
  }

  async function attempt(delivery: ClaimedDelivery) {
    const result = await post(delivery.url, delivery.body, webhookHeaders(delivery));
    pending.push({
      deliveryId: delivery.id,
      endpointId: delivery.endpointId,
      attempts: delivery.attempts,
      status: result.status ?? null,
      durationMs: result.durationMs,
      error: result.error ? `${result.error.reason}: ${result.error.message}` : null,
      responseBody: result.responseBody ?? null,
      retryAfterSeconds: result.retryAfterSeconds ?? null,
    });
  }

  const loop = wakeableLoop(
    async () => {
      const busy = [...inFlight].filter(([, n]) => n >= PER_ENDPOINT).map(([id]) => id);
      const claimed = await claimDueDeliveries(MAX_IN_FLIGHT - total, PER_ENDPOINT, busy);
      for (const delivery of claimed) {
        total++;
        unrecorded.add(delivery.id);
        inFlight.set(delivery.endpointId, (inFlight.get(delivery.endpointId) ?? 0) + 1);
        void attempt(delivery)
          .catch((err) => {
            // No outcome to record: its lease runs out and it is tried again.
            unrecorded.delete(delivery.id);
            log.error({ err, delivery_id: delivery.id }, 'webhook attempt failed unexpectedly');
          })
          .finally(() => {
            total--;
            const n = inFlight.get(delivery.endpointId)! - 1;
            if (n === 0) inFlight.delete(delivery.endpointId);
            else inFlight.set(delivery.endpointId, n);
            if (pending.length >= FLUSH_SIZE) void flush();
            else flushTimer ??= setTimeout(() => void flush(), FLUSH_MS);
            // A slot is free: other endpoints' and conversations' deliveries need not wait for the flush.
            loop.wake();
          });
      }
      // Claimed a full share: there may be more due.
      return claimed.length > 0 && total < MAX_IN_FLIGHT;
    },
    IDLE_MS,
    (err) => log.warn({ err: { message: (err as Error).message } }, 'claiming webhook deliveries failed'),
  );

  return {
    wake: () => loop.wake(),
    async stop() {
      await loop.stop();
      while (total > 0) await new Promise((r) => setTimeout(r, 50));
      await flush();
      clearInterval(renewal);
    },
  };
}
