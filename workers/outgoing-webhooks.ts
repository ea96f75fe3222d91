import { createSql } from '@/db/connect';
import type { Env } from '@/server/env';
import { postWebhook, WebhookPolicy, type WebhookPolicyOptions, type WebhookResult } from '@/server/lib/public-post';
import type { Logger } from '@/server/logger';
import { dispatchEvents } from '@/server/services/events/dispatch';
import { EVENT_HANDLERS } from '@/server/services/events/handlers';
import { outgoingWebhooksHandler } from '@/server/services/outgoing-webhooks/handler';
import {
  claimDueDeliveries,
  deliveredStatus,
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
 *   (migration 0028) and every second in case a wake-up was missed: the outgoing webhooks' handler
 *   in a loop of its own, the others in another;
 * - the sender POSTs due deliveries, many at once, woken when deliveries are created or redelivered
 *   and as requests finish, and every second for retries coming due. It keeps at most
 *   MAX_IN_FLIGHT requests going, at most PER_ENDPOINT of them to one endpoint, so a slow or dead
 *   endpoint holds its own share of the worker, never the others'; sending and the inbox never wait
 *   for any of it. It claims chains (one conversation's deliveries to one endpoint, in order:
 *   claimDueDeliveries) and sends each chain's deliveries one after the other, so what queued behind
 *   a slow answer goes as soon as it comes. It claims up to PREFETCH chains per endpoint beyond
 *   those in flight and keeps them in a queue of its own, so a request that finishes is followed by
 *   the next at once, not after a claim's round trip (on a busy machine a claim takes 50–100 ms,
 *   while a request to a nearby receiver takes 20). Outcomes are written in batches as they come.
 */

const IDLE_MS = 1_000;
export const MAX_IN_FLIGHT = 256;
export const PER_ENDPOINT = 32;
/**
 * Chains claimed per endpoint beyond its requests in flight, waiting in the sender's own queue (not
 * in the HTTP agent's, where they would hold worker slots other endpoints need). The claim loop is
 * woken for an endpoint when its queue falls to REFILL_AT, so claims are few and large.
 */
export const PREFETCH = 32;
const REFILL_AT = 8;
/** Chains queued across all endpoints, at most. */
const MAX_QUEUED = 256;
/**
 * Outcomes are written when this many are waiting, or FLUSH_MS after the first one arrived, in up to
 * FLUSH_WRITERS writes at once: a conversation's event that was not yet pending when its chain was
 * claimed waits for the chain's writes.
 */
const FLUSH_SIZE = 200;
const FLUSH_MS = 20;
const FLUSH_WRITERS = 4;

/**
 * The sender's HTTP policy. The sender bounds its requests (PER_ENDPOINT to an endpoint,
 * MAX_IN_FLIGHT in all), so the connection pool must never make one wait: endpoints of one host
 * (two paths of one platform) share its pool, and a pool of PER_ENDPOINT connections would let a
 * slow one hold the other's requests, their 15 s deadline running while they wait for a connection.
 */
export function senderPolicy(options: Omit<WebhookPolicyOptions, 'maxSocketsPerOrigin'>): WebhookPolicy {
  return new WebhookPolicy({ ...options, maxSocketsPerOrigin: MAX_IN_FLIGHT });
}

export type Poster = (url: string, body: string, headers: Record<string, string>) => Promise<WebhookResult>;

export function startOutgoingWebhooks(config: Env, log: Logger, poster?: Poster) {
  // One policy for the process: its keep-alive connections are shared by every delivery.
  const policy = poster ? null : senderPolicy({ allowPrivate: config.webhookAllowPrivateUrls });
  const post: Poster = poster ?? ((url, body, headers) => postWebhook(url, body, headers, policy!));
  const sender = startSender(post, log);
  // Two loops: the outgoing webhooks' handler alone, so its deliveries never wait for a round of
  // the others (an assignment sweep, notifications), and the others in one round, in the list's
  // order (one behind another: `after`). Each takes one connection at a time.
  const groups = [
    EVENT_HANDLERS.filter((h) => h.name === outgoingWebhooksHandler.name),
    EVENT_HANDLERS.filter((h) => h.name !== outgoingWebhooksHandler.name),
  ].filter((g) => g.length > 0);
  const dispatchers = groups.map((handlers) =>
    wakeableLoop(
      async () => {
        let more = false;
        for (const handler of handlers) {
          // A full batch means there may be more: run again at once. One handler failing (its batch
          // and cursor rolled back, tried again next round) does not hold up the others.
          try {
            if ((await dispatchEvents(handler)) > 0) more = true;
          } catch (err) {
            log.warn({ err: { message: (err as Error).message }, handler: handler.name }, 'event dispatch failed');
          }
        }
        if (more && handlers.includes(outgoingWebhooksHandler)) sender.wake();
        return more;
      },
      IDLE_MS,
      (err) => log.warn({ err: { message: (err as Error).message } }, 'event dispatch failed'),
    ),
  );
  const wakeDispatchers = () => {
    for (const d of dispatchers) d.wake();
  };
  // LISTEN needs a session of its own (DATABASE_LISTEN_URL when DATABASE_URL is a pooler).
  const listener = createSql(config.databaseListenUrl!, { max: 1, idle_timeout: 0 });
  void listener.listen('events_appended', wakeDispatchers).catch((err) => log.warn({ err }, 'LISTEN events_appended failed'));
  void listener
    .listen(WEBHOOK_DELIVERIES_CHANNEL, () => sender.wake())
    .catch((err) => log.warn({ err }, `LISTEN ${WEBHOOK_DELIVERIES_CHANNEL} failed`));
  return {
    wake: wakeDispatchers,
    async stop() {
      await Promise.all(dispatchers.map((d) => d.stop()));
      await sender.stop();
      policy?.close();
      await listener.end({ timeout: 5 });
    },
  };
}

function startSender(post: Poster, log: Logger) {
  const inFlight = new Map<number, number>();
  let total = 0;
  /** Claimed chains not started yet, per endpoint, oldest first. */
  const queued = new Map<number, ClaimedDelivery[][]>();
  let queuedTotal = 0;
  let stopping = false;
  const pending: AttemptOutcome[] = [];
  /** Claimed behind a failure and not attempted: their leases end at the next write. */
  const released: number[] = [];
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
  const writing = new Set<Promise<void>>();

  /** Writes what is waiting, in a write of its own unless FLUSH_WRITERS are busy (their ends write the rest). */
  function flush() {
    if (flushTimer) clearTimeout(flushTimer);
    flushTimer = null;
    if ((pending.length === 0 && released.length === 0) || writing.size >= FLUSH_WRITERS) return;
    const batch = pending.splice(0, FLUSH_SIZE);
    const releasing = released.splice(0);
    // A failed write is retried (the outcomes stay ours until written).
    const write = (async () => {
      for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
        try {
          await recordAttempts(batch, releasing);
          for (const outcome of batch) unrecorded.delete(outcome.deliveryId);
          for (const id of releasing) unrecorded.delete(id);
          break;
        } catch (err) {
          log.warn({ err: { message: (err as Error).message } }, 'could not record webhook attempts; retrying');
          await new Promise((r) => setTimeout(r, delay));
        }
      }
    })().finally(() => {
      writing.delete(write);
      flush();
      // Capacity and order: a conversation's next event is due once this one is written.
      loop.wake();
    });
    writing.add(write);
  }

  /** Sends a chain (one conversation's deliveries to one endpoint) one after the other, up to the first that fails. */
  async function sendChain(chain: ClaimedDelivery[]) {
    for (const [i, delivery] of chain.entries()) {
      let result: WebhookResult;
      try {
        result = await post(delivery.url, delivery.body, webhookHeaders(delivery));
      } catch (err) {
        // No outcome to record: the leases of this one and those behind it run out, and they are tried again.
        for (const d of chain.slice(i)) unrecorded.delete(d.id);
        log.error({ err, delivery_id: delivery.id }, 'webhook attempt failed unexpectedly');
        return;
      }
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
      if (pending.length >= FLUSH_SIZE) flush();
      else flushTimer ??= setTimeout(flush, FLUSH_MS);
      if (!deliveredStatus(result.status)) {
        released.push(...chain.slice(i + 1).map((d) => d.id));
        return;
      }
    }
  }

  /** Starts an endpoint's queued chains while it and the worker have free slots. */
  function pump(endpointId: number) {
    const queue = queued.get(endpointId);
    while (queue?.length && (inFlight.get(endpointId) ?? 0) < PER_ENDPOINT && total < MAX_IN_FLIGHT && !stopping) {
      const chain = queue.shift()!;
      queuedTotal--;
      total++;
      inFlight.set(endpointId, (inFlight.get(endpointId) ?? 0) + 1);
      void sendChain(chain).finally(() => {
        total--;
        const n = inFlight.get(endpointId)! - 1;
        if (n === 0) inFlight.delete(endpointId);
        else inFlight.set(endpointId, n);
        flushTimer ??= setTimeout(flush, FLUSH_MS);
        pump(endpointId);
        // The worker's slots were all taken: another endpoint's queue may be waiting for this one.
        if (total === MAX_IN_FLIGHT - 1) for (const id of queued.keys()) pump(id);
        // Its queue is running low: claim more (other endpoints' and conversations' due deliveries
        // need not wait for this one's outcome to be written).
        if ((queued.get(endpointId)?.length ?? 0) <= REFILL_AT) loop.wake();
      });
    }
    if (queue?.length === 0) queued.delete(endpointId);
  }

  const loop = wakeableLoop(
    async () => {
      // What each endpoint holds already, in flight or queued: it is claimed up to PER_ENDPOINT + PREFETCH.
      const held = new Map(inFlight);
      for (const [id, queue] of queued) held.set(id, (held.get(id) ?? 0) + queue.length);
      const room = MAX_IN_FLIGHT + MAX_QUEUED - total - queuedTotal;
      const chains = await claimDueDeliveries(room, PER_ENDPOINT + PREFETCH, held);
      for (const chain of chains) {
        const endpointId = chain[0]!.endpointId;
        for (const d of chain) unrecorded.add(d.id);
        const queue = queued.get(endpointId);
        if (queue) queue.push(chain);
        else queued.set(endpointId, [chain]);
        queuedTotal++;
      }
      for (const endpointId of new Set(chains.map((c) => c[0]!.endpointId))) pump(endpointId);
      // Claimed something and there is room for more: there may be more due.
      return chains.length > 0 && total + queuedTotal < MAX_IN_FLIGHT + MAX_QUEUED;
    },
    IDLE_MS,
    (err) => log.warn({ err: { message: (err as Error).message } }, 'claiming webhook deliveries failed'),
  );

  return {
    wake: () => loop.wake(),
    async stop() {
      await loop.stop();
      // What was claimed and not started goes back at once (its leases end at the last write).
      stopping = true;
      for (const queue of queued.values()) for (const chain of queue) released.push(...chain.map((d) => d.id));
      queued.clear();
      queuedTotal = 0;
      while (total > 0 || pending.length > 0 || writing.size > 0) {
        flush();
        await new Promise((r) => setTimeout(r, 50));
      }
      clearInterval(renewal);
    },
  };
}
