import { sql } from 'drizzle-orm';
import { textArray } from '@/db/sql-array';
import { db, type Tx } from '@/server/db/client';
import { recordEvents } from '@/server/services/events/record';
import {
  DISABLE_AFTER_FAILING_DAYS,
  MAX_WEBHOOK_ATTEMPTS,
  MAX_WEBHOOK_RESPONSE_BODY,
  RETRY_DELAYS_SECONDS,
} from '@/server/shared/outgoing-webhooks';
import { signWebhook } from './signing';

/**
 * Attempts of outgoing webhook deliveries (docs/api.md#webhooks-you-receive-from-us): claiming the
 * due ones, signing them, and recording what happened. The HTTP request itself is the caller's
 * (workers/outgoing-webhooks.ts), outside any transaction: a claim is a lease (the delivery's next
 * attempt moved LEASE_SECONDS ahead, committed before the request goes), so a worker that dies
 * mid-request leaves its deliveries to be tried again when the lease ends — the only way one is
 * sent twice, and the receiver recognizes it by its `webhook-id`.
 */

/** A failing run at least this long, ended by a success, was an outage: see recordAttempts. */
export const OUTAGE_SECONDS = 30;

/** Longer than an attempt can take (its 15 s deadline) with room to record its outcome. */
export const LEASE_SECONDS = 60;

export type ClaimedDelivery = {
  id: number;
  endpointId: number;
  eventId: number;
  /** Attempts made before this one. */
  attempts: number;
  url: string;
  body: string;
  secrets: string[];
};

/** At most this many deliveries of one conversation are claimed at once (see claimDueDeliveries). */
export const CHAIN_LENGTH = 20;

/**
 * Due deliveries, leased, as chains: each chain is one conversation's pending deliveries to one
 * endpoint in order (or one delivery outside a conversation), to be sent one after the other and
 * no further than the first that fails. A conversation's first pending delivery there (in flight,
 * waiting for a retry, or due) heads it; one that is not first is never claimed on its own, so one
 * conversation's events arrive in order, a conversation that fails holds up only itself, and two
 * workers never send parts of one conversation at once (the head is locked, then leased). A chain
 * is one request at a time: each enabled endpoint gets chains up to what is left of its share
 * (`perEndpoint` less its requests in flight, `inFlight`), at most `limit` chains in all, of at
 * most CHAIN_LENGTH deliveries. So what queued behind a slow answer goes at once when it comes,
 * without a database round trip per event.
 */
export async function claimDueDeliveries(
  limit: number,
  perEndpoint: number,
  inFlight: ReadonlyMap<number, number>,
  tx: Tx = db,
): Promise<ClaimedDelivery[][]> {
  if (limit <= 0) return [];
  const rows = await tx.execute<{
    id: number;
    head_id: number;
    endpoint_id: number;
    event_id: number;
    attempts: number;
    url: string;
    body: string;
    secret: string;
    previous_secret: string | null;
  }>(claimStatement(limit, perEndpoint, inFlight));
  const chains = new Map<number, ClaimedDelivery[]>();
  for (const r of rows) {
    const delivery: ClaimedDelivery = {
      id: r.id,
      endpointId: r.endpoint_id,
      eventId: r.event_id,
      attempts: r.attempts,
      url: r.url,
      body: r.body,
      secrets: r.previous_secret ? [r.secret, r.previous_secret] : [r.secret],
    };
    chains.set(r.head_id, [...(chains.get(r.head_id) ?? []), delivery]);
  }
  return [...chains.values()].map((chain) => chain.sort((a, b) => a.id - b.id));
}

/** The claim's one statement (claimDueDeliveries); exported so a test can read its plan. */
export function claimStatement(limit: number, perEndpoint: number, inFlight: ReadonlyMap<number, number>) {
  return sql`
    with busy as (
      select * from unnest(${textArray([...inFlight.keys()])}::int[], ${textArray([...inFlight.values()])}::int[]) as b(id, n)
    ),
    endpoints as (
      select e.id, e.url, e.secret, case when e.previous_secret_expires_at > now() then e.previous_secret end as previous_secret,
             ${perEndpoint} - coalesce(b.n, 0) as share
      from webhook_endpoints e left join busy b on b.id = e.id
      where e.enabled and coalesce(b.n, 0) < ${perEndpoint}
        and exists (select 1 from webhook_deliveries d
                    where d.endpoint_id = e.id and d.status = 'pending' and d.attempts >= 0 and d.next_attempt_at <= now())
    ),
    heads as (
      select d.id, d.endpoint_id, d.conversation_id, e.url, e.secret, e.previous_secret
      from endpoints e
      cross join lateral (
        select d.id, d.endpoint_id, d.conversation_id from webhook_deliveries d
        -- attempts >= 0 (always true) picks the endpoint-wide index; the lookups of one conversation
        -- below never state it, so they cannot take that index (db/schema/webhook-endpoints.ts).
        where d.endpoint_id = e.id and d.status = 'pending' and d.attempts >= 0 and d.next_attempt_at <= now()
          and (d.conversation_id is null or not exists (
                select 1 from webhook_deliveries p
                where p.endpoint_id = d.endpoint_id and p.conversation_id = d.conversation_id
                  and p.status = 'pending' and p.conversation_id is not null and p.id < d.id))
        order by d.id
        limit e.share
        for update of d skip locked
      ) d
      limit ${limit}
    ),
    chains as (
      select h.id as head_id, h.id from heads h
      union all
      select h.id, f.id from heads h
      cross join lateral (
        select f.id from webhook_deliveries f
        where h.conversation_id is not null and f.endpoint_id = h.endpoint_id and f.conversation_id = h.conversation_id
          and f.status = 'pending' and f.id > h.id and f.next_attempt_at <= now()
          -- consecutive: none between them waits for later
          and not exists (select 1 from webhook_deliveries q
                          where q.endpoint_id = h.endpoint_id and q.conversation_id = h.conversation_id and q.status = 'pending'
                            and q.id > h.id and q.id < f.id and q.next_attempt_at > now())
        order by f.id
        limit ${CHAIN_LENGTH - 1}
      ) f
    )
    update webhook_deliveries w
    set next_attempt_at = now() + make_interval(secs => ${LEASE_SECONDS})
    from chains c join heads h on h.id = c.head_id
    where w.id = c.id and w.status = 'pending'
    returning w.id, c.head_id, w.endpoint_id, w.event_id, w.attempts, w.payload::text as body, h.url, h.secret, h.previous_secret`;
}

/**
 * Renews the leases of deliveries a worker has claimed and not yet recorded. Only a lease is moved
 * (a next attempt within LEASE_SECONDS): a retry already scheduled further out is left alone.
 */
export async function extendLeases(deliveryIds: readonly number[], tx: Tx = db): Promise<void> {
  await tx.execute(sql`
    update webhook_deliveries set next_attempt_at = now() + make_interval(secs => ${LEASE_SECONDS})
    where id = any(${textArray(deliveryIds)}::bigint[]) and status = 'pending'
      and next_attempt_at <= now() + make_interval(secs => ${LEASE_SECONDS})`);
}

/** The Standard Webhooks headers of one attempt (a fresh timestamp and signature each time). */
export function webhookHeaders(delivery: ClaimedDelivery, now = new Date()): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const id = String(delivery.eventId);
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(delivery.secrets, id, timestamp, delivery.body),
    'user-agent': 'messaging-webhooks/1',
  };
}

/** What one attempt came to, as the sender saw it. */
export type AttemptOutcome = {
  deliveryId: number;
  endpointId: number;
  status: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
  /** The receiver's Retry-After, in seconds, if it gave a valid one. */
  retryAfterSeconds: number | null;
  /** Attempts made before this one. */
  attempts: number;
};

/** The wait before the attempt after `attempts` failed ones; a Retry-After is a floor, bounded by the longest wait. */
export function retryDelaySeconds(attempts: number, retryAfterSeconds: number | null): number {
  const scheduled = RETRY_DELAYS_SECONDS[Math.min(attempts, RETRY_DELAYS_SECONDS.length) - 1]!;
  const longest = RETRY_DELAYS_SECONDS[RETRY_DELAYS_SECONDS.length - 1]!;
  return retryAfterSeconds === null ? scheduled : Math.min(Math.max(scheduled, retryAfterSeconds), longest);
}

/** A 2xx answer: the one outcome that delivers (any other is retried, or fails the delivery). */
export const deliveredStatus = (status: number | null | undefined) => status != null && status >= 200 && status < 300;
const delivered = (o: AttemptOutcome) => deliveredStatus(o.status);

/**
 * Writes a batch of attempts' outcomes: a 2xx is delivered (and ends its endpoint's failing run);
 * a 410 Gone disables its endpoint; anything else is retried on the schedule, and after the last
 * attempt the delivery is failed. An endpoint back from an outage has its waiting deliveries made
 * due at once. Then every endpoint that has failed continuously for
 * DISABLE_AFTER_FAILING_DAYS is disabled. `released`: deliveries claimed in a chain behind one that
 * failed, not attempted, whose lease ends now.
 *
 * This is on every conversation's path (its next event is due only once this one is written), so a
 * batch of successes is one statement, outside a transaction; a batch with failures is one
 * transaction of a few. Several batches may be written at once (the sender does): endpoint rows are
 * locked in id order, so two never wait for each other in a circle.
 */
export async function recordAttempts(
  outcomes: readonly AttemptOutcome[],
  released: readonly number[] = [],
  tx: Tx = db,
): Promise<void> {
  if (outcomes.length === 0 && released.length === 0) return;
  const next = outcomes.map((o) => {
    const attempts = o.attempts + 1;
    if (delivered(o)) return { state: 'delivered', delay: null };
    if (o.status === 410 || attempts >= MAX_WEBHOOK_ATTEMPTS) return { state: 'failed', delay: null };
    return { state: 'pending', delay: retryDelaySeconds(attempts, o.retryAfterSeconds) };
  });
  // An endpoint's failing run: started by its first failure, ended by any success.
  const succeeded = [...new Set(outcomes.filter(delivered).map((o) => o.endpointId))];
  const failed = [...new Set(outcomes.filter((o) => !delivered(o)).map((o) => o.endpointId))].filter(
    (id) => !succeeded.includes(id),
  );
  const gone = [...new Set(outcomes.filter((o) => o.status === 410).map((o) => o.endpointId))];
  const write = async (tx: Tx) => {
    const recovered = await tx.execute<{ id: number; after_outage: boolean }>(sql`
      with written as (
        update webhook_deliveries d
        set attempts = d.attempts + 1,
            status = v.state,
            next_attempt_at = case when v.state = 'pending' then now() + make_interval(secs => v.delay) else d.next_attempt_at end,
            delivered_at = case when v.state = 'delivered' then now() end,
            last_attempt_at = now(),
            last_status_code = v.status,
            last_duration_ms = v.duration_ms,
            last_error = v.error,
            last_response_body = left(v.response_body, ${MAX_WEBHOOK_RESPONSE_BODY})
        from unnest(${textArray(outcomes.map((o) => o.deliveryId))}::bigint[], ${textArray(next.map((n) => n.state))},
                    ${textArray(next.map((n) => n.delay))}::int[], ${textArray(outcomes.map((o) => o.status))}::int[],
                    ${textArray(outcomes.map((o) => Math.round(o.durationMs)))}::int[], ${textArray(outcomes.map((o) => o.error))},
                    ${textArray(outcomes.map((o) => o.responseBody))})
             as v(id, state, delay, status, duration_ms, error, response_body)
        where d.id = v.id
        returning d.id
      ),
      -- Claimed behind one that failed, not attempted: due again (its conversation waits for that one).
      released as (
        update webhook_deliveries set next_attempt_at = now()
        where id = any(${textArray(released)}::bigint[]) and status = 'pending'
      ),
      started as (
        update webhook_endpoints e set failing_since = now()
        from (select id from webhook_endpoints
              where id = any(${textArray(failed)}::int[]) and failing_since is null order by id for update) f
        where e.id = f.id
      ),
      ended as (
        update webhook_endpoints e set failing_since = null
        from (select id, failing_since from webhook_endpoints
              where id = any(${textArray(succeeded)}::int[]) and failing_since is not null order by id for update) was
        where e.id = was.id
        returning e.id, was.failing_since < now() - make_interval(secs => ${OUTAGE_SECONDS}) as after_outage
      )
      select id, after_outage from ended`);
    // An endpoint back from an outage (every attempt failed for OUTAGE_SECONDS) gets what waits for
    // it now, not at each delivery's scheduled retry (up to a day away), so it catches up at once.
    // Not after a failure among successes (one delivery it refuses): that one keeps its schedule.
    // Deliveries in flight (leased) or due within the lease are left as they are.
    const back = recovered.filter((r) => r.after_outage).map((r) => r.id);
    if (back.length)
      await tx.execute(sql`
        update webhook_deliveries set next_attempt_at = now()
        where endpoint_id = any(${textArray(back)}::int[]) and status = 'pending' and attempts >= 0
          and next_attempt_at > now() + make_interval(secs => ${LEASE_SECONDS})`);
  };
  if (failed.length === 0 && gone.length === 0) return write(tx);
  await tx.transaction(async (tx) => {
    await write(tx);
    await disableEndpoints(gone, 'The endpoint answered 410 Gone', tx);
    const [stale] = await tx.execute<{ ids: number[] }>(sql`
      select coalesce(array_agg(id), '{}') as ids from webhook_endpoints
      where enabled and id = any(${textArray(failed)}::int[])
        and failing_since < now() - make_interval(days => ${DISABLE_AFTER_FAILING_DAYS})`);
    await disableEndpoints(stale!.ids, `Every delivery failed for ${DISABLE_AFTER_FAILING_DAYS} days`, tx);
  });
}

/**
 * Disables endpoints with a reason the business sees, fails their pending deliveries (redeliverable
 * once re-enabled) and records `webhook_endpoint.disabled` for each, so the business's other
 * endpoints and, later, its admins hear of it.
 */
export async function disableEndpoints(endpointIds: readonly number[], reason: string, tx: Tx = db): Promise<void> {
  if (endpointIds.length === 0) return;
  const disabled = await tx.execute<{ id: number; business_id: number }>(sql`
    update webhook_endpoints set enabled = false, disabled_reason = ${reason}, disabled_at = now(), updated_at = now()
    where id = any(${textArray(endpointIds)}::int[]) and enabled
    returning id, business_id`);
  if (disabled.length === 0) return;
  await tx.execute(sql`
    update webhook_deliveries set status = 'failed', last_error = coalesce(last_error, ${reason})
    where endpoint_id = any(${textArray(disabled.map((d) => d.id))}::int[]) and status = 'pending' and attempts >= 0`);
  await recordEvents(
    disabled.map((d) => ({
      type: 'webhook_endpoint.disabled' as const,
      businessId: d.business_id,
      actor: { type: 'system' as const },
      data: { endpoint_id: d.id, reason },
    })),
    tx,
  );
}

const PRUNE_BATCH = 10_000;

/**
 * The delivery log keeps what the event log keeps (EVENT_RETENTION_DAYS): older delivered and failed
 * deliveries are deleted, oldest first, in batches of PRUNE_BATCH (short transactions, no long lock),
 * at most `maxBatches` per run. A pending one stays until it is delivered or fails.
 */
export async function pruneWebhookDeliveries(retentionDays: number, maxBatches = 20, tx: Tx = db): Promise<number> {
  let pruned = 0;
  for (let i = 0; i < maxBatches; i++) {
    const result = await tx.execute(sql`
      delete from webhook_deliveries where id in (
        select id from webhook_deliveries
        where created_at < now() - make_interval(days => ${retentionDays}) and status <> 'pending'
        order by id limit ${PRUNE_BATCH})`);
    pruned += result.count;
    if (result.count < PRUNE_BATCH) break;
  }
  return pruned;
}
