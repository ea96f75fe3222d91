import { sql, type SQL } from 'drizzle-orm';
import { db } from '@/db/client';
import { env } from '@/server/env';
import { AppError } from '@/server/errors';
import { logger } from '@/server/logger';

/**
 * Fixed one-minute windows per caller, counted in PostgreSQL (`rate_limit_buckets`) so the limit
 * holds however many web processes serve the same key — without a database write per request.
 *
 * Each process counts its requests in memory and adds them to the shared row in one statement
 * about once a second (FLUSH_INTERVAL_MS); every flush also reads back the shared total, which
 * includes what the other processes flushed. A request is decided locally, from that total plus
 * this process's unflushed hits, while the total is fresh (read within STALE_AFTER_MS) and the
 * estimate stays below the limit minus a headroom (10% of the limit). Otherwise — the first
 * request of a caller in a window, after a quiet spell, and every request within the headroom —
 * it is counted synchronously (one upsert returning the shared total), so near the limit the
 * decision is exact, as with a write per request. Hits a statement is still adding (an exact count,
 * a flush) are part of every estimate until it answers: requests decided meanwhile, concurrent ones
 * of the same caller, never see the count as it was before them.
 *
 * The trade-off: hits other processes took in the last two seconds or so may not be visible here
 * yet, so the limit can be exceeded only if, within that time, the caller's requests across
 * processes take the count from below the headroom to beyond the limit (more than 60 requests at the
 * default 600/minute). A process that dies loses its last second of counts (a short-lived one calls
 * flushRateLimits before it exits). Windows follow each process's clock, not the database's.
 */
// Scopes in use: a caller's own (`key:<id>`, `session:<id>`, `platform:<hash>`; RATE_LIMIT_PER_MINUTE);
// `business:<id>`, every key and session of a business together (RATE_LIMIT_PER_BUSINESS_PER_MINUTE,
// server/http/credentials.ts); `auth-token:<business id>`, the sessions POST /auth/token mints for a
// business (AUTH_TOKENS_PER_BUSINESS_PER_MINUTE).
const FLUSH_INTERVAL_MS = 1000;
/** A shared total read longer ago than this is refreshed synchronously before deciding. */
const STALE_AFTER_MS = 2 * FLUSH_INTERVAL_MS;
const WINDOW_MS = 60_000;
/** Within this many requests of the limit, every request is counted synchronously. */
const headroom = (limit: number) => Math.ceil(limit / 10);

type Bucket = {
  scope: string;
  /** Start of the window (epoch ms). */
  window: number;
  /** The shared count as PostgreSQL last reported it (every process's flushed hits, ours included). */
  shared: number;
  /** Our hits not yet added to PostgreSQL. */
  pending: number;
  /**
   * Our hits a statement is adding to PostgreSQL, not answered yet: part of every estimate, so that
   * a request decided meanwhile does not take the count for what it was before them.
   */
  inflight: number;
  /** When `shared` was read (epoch ms); 0 until this process has read it in this window. */
  readAt: number;
};

/** By keyOf (caller and window); past windows stay until their hits are flushed. */
const buckets = new Map<string, Bucket>();
let flushTimer: NodeJS.Timeout | undefined;
let flushChain: Promise<void> = Promise.resolve();

const windowOf = (now: number) => now - (now % WINDOW_MS);

const keyOf = (b: { scope: string; window: number }) => `${b.scope}@${b.window}`;

function bucketOf(scope: string, window: number): Bucket {
  const key = keyOf({ scope, window });
  let bucket = buckets.get(key);
  if (!bucket) buckets.set(key, (bucket = { scope, window, shared: 0, pending: 0, inflight: 0, readAt: 0 }));
  return bucket;
}

/** May this request be decided here: the shared total is fresh and the estimate stays below the headroom? */
const decidedLocally = (bucket: Bucket, now: number, limit: number) =>
  now - bucket.readAt <= STALE_AFTER_MS && bucket.shared + bucket.inflight + bucket.pending + 1 <= limit - headroom(limit);

/** Adds each bucket's `delta` hits to its shared row; answers the shared counts after it, by keyOf. */
async function addToShared(rows: { scope: string; window: number; delta: number }[]): Promise<Map<string, number>> {
  const result = await db.execute<{ caller_scope: string; window_start: Date | string; count: number }>(sql`
    insert into rate_limit_buckets (caller_scope, window_start, count)
    select s, to_timestamp(w / 1000.0), d
    from unnest(${sql.param(rows.map((r) => r.scope))}::text[], ${sql.param(rows.map((r) => r.window))}::bigint[], ${sql.param(rows.map((r) => r.delta))}::int[]) as t(s, w, d)
    on conflict (caller_scope, window_start) do update set count = rate_limit_buckets.count + excluded.count
    returning caller_scope, window_start, count`);
  return new Map(result.map((r) => [keyOf({ scope: r.caller_scope, window: new Date(r.window_start).getTime() }), r.count]));
}

/**
 * Adds every bucket's unflushed hits to PostgreSQL (one statement) and refreshes the shared counts.
 * Runs about once a second while there are hits; short-lived processes (and tests) call it before
 * they exit so their counts are not lost. Flushes run one after another; the returned promise
 * settles when this one (and any before it) has written.
 */
export function flushRateLimits(): Promise<void> {
  flushChain = flushChain.then(flushOnce);
  return flushChain;
}

async function flushOnce(): Promise<void> {
  const current = windowOf(Date.now());
  for (const [key, b] of buckets) if (b.window < current && b.pending === 0 && b.inflight === 0) buckets.delete(key);
  const due = [...buckets.values()].filter((b) => b.pending > 0).map((b) => ({ b, delta: b.pending }));
  if (due.length === 0) return;
  for (const d of due) {
    d.b.pending -= d.delta;
    d.b.inflight += d.delta;
  }
  try {
    const counts = await addToShared(due.map(({ b, delta }) => ({ scope: b.scope, window: b.window, delta })));
    const readAt = Date.now();
    for (const { b, delta } of due) {
      b.inflight -= delta;
      b.shared = Math.max(b.shared, counts.get(keyOf(b)) ?? 0);
      b.readAt = readAt;
    }
  } catch (err) {
    // Kept for the next flush: counts are late, never lost while the process lives.
    for (const d of due) {
      d.b.inflight -= d.delta;
      d.b.pending += d.delta;
    }
    logger.warn({ err: { message: (err as Error).message } }, 'rate limit flush failed');
  }
}

function scheduleFlush() {
  if (flushTimer) return;
  flushTimer = setTimeout(() => {
    flushTimer = undefined;
    void flushRateLimits().then(() => {
      if ([...buckets.values()].some((b) => b.pending > 0)) scheduleFlush();
    });
  }, FLUSH_INTERVAL_MS);
  flushTimer.unref();
}

/** What a 429 says by default: the per-credential limit (RATE_LIMIT_PER_MINUTE). */
const perMinute = (limit: number) => `Rate limit of ${limit} requests per minute exceeded`;

/** The 429 of a window: Retry-After is the seconds left in it (at least 1). */
const limited = (message: string, window: number, now: number) =>
  new AppError('rate_limited', message, {
    retryAfterSeconds: Math.max(1, Math.ceil((window + WINDOW_MS - now) / 1000)),
  });

/**
 * Counts one request of `scope` against `limit` per minute; 429 with Retry-After past it, saying
 * `message` (by default the per-credential limit's).
 */
export async function enforceRateLimit(
  scope: string,
  limit = env().rateLimitPerMinute,
  message = perMinute(limit),
): Promise<void> {
  const now = Date.now();
  const window = windowOf(now);
  const bucket = bucketOf(scope, window);

  let count: number;
  if (decidedLocally(bucket, now, limit)) {
    bucket.pending += 1;
    count = bucket.shared + bucket.inflight + bucket.pending;
    scheduleFlush();
  } else {
    // Exact: this hit (with any unflushed ones) added now and the shared total read back. Hits
    // counted while the statement runs see these as in flight (so near the limit they are exact
    // too) and stay in `pending` for the next flush.
    const delta = bucket.pending + 1;
    bucket.pending = 0;
    bucket.inflight += delta;
    try {
      count = (await addToShared([{ scope, window, delta }])).get(keyOf(bucket)) ?? delta;
    } catch (err) {
      bucket.pending += delta;
      throw err;
    } finally {
      bucket.inflight -= delta;
    }
    bucket.shared = Math.max(bucket.shared, count);
    bucket.readAt = Date.now();
  }
  if (count > limit) throw limited(message, window, now);
}

/**
 * enforceRateLimit split in two around a statement that also resolves the caller (a session, whose
 * scope is known only once its token is looked up), so credentials and rate limit cost one round
 * trip together (server/http/credentials.ts). planRateLimit decides, from what this process knows
 * of `scope` (the caller it expects, if any), whether the statement must add hits to the shared row
 * (`delta` > 0: this request and the unflushed ones it takes over) or the request will be decided
 * locally (`delta` 0); countHitsSql is that addition, as a CTE; settleRateLimit finishes the count.
 */
export type RateLimitPlan = {
  scope: string | undefined;
  window: number;
  delta: number;
  /** The unflushed hits of `scope` it took over (put back if its statement counts nothing). */
  taken: number;
  /** What it put in flight on `scope`'s bucket, until its statement answers (then 0). */
  inflight: number;
  now: number;
};

export function planRateLimit(scope: string | undefined, limit = env().rateLimitPerMinute): RateLimitPlan {
  const now = Date.now();
  const window = windowOf(now);
  if (scope === undefined) return { scope, window, delta: 1, taken: 0, inflight: 0, now };
  const bucket = bucketOf(scope, window);
  if (decidedLocally(bucket, now, limit)) return { scope, window, delta: 0, taken: 0, inflight: 0, now };
  const taken = bucket.pending;
  bucket.pending = 0;
  bucket.inflight += taken + 1;
  return { scope, window, delta: taken + 1, taken, inflight: taken + 1, now };
}

/**
 * The shared-row addition of enforceRateLimit's exact path, for a WITH clause: `scopes` selects one
 * `scope` column (none when the credential resolved to nothing: nothing is counted); `window` and
 * `delta` are the plan's. Returns the row's count after the addition.
 */
export const countHitsSql = (scopes: SQL, window: unknown, delta: unknown) => sql`
  insert into rate_limit_buckets (caller_scope, window_start, count)
  select c.scope, to_timestamp(${window}::bigint / 1000.0), ${delta}::int from (${scopes}) c where ${delta}::int > 0
  on conflict (caller_scope, window_start) do update set count = rate_limit_buckets.count + excluded.count
  returning count`;

/** The plan's statement has answered: its hits are no longer in flight (once). */
function land(plan: RateLimitPlan): Bucket | undefined {
  if (plan.scope === undefined) return undefined;
  const bucket = bucketOf(plan.scope, plan.window);
  bucket.inflight -= plan.inflight;
  plan.inflight = 0;
  return bucket;
}

/** Puts back the hits a plan took over when its statement failed or counted nothing (no caller). */
export function abandonRateLimit(plan: RateLimitPlan): void {
  const bucket = land(plan);
  if (!bucket || plan.taken === 0) return;
  bucket.pending += plan.taken;
  plan.taken = 0;
  scheduleFlush();
}

/**
 * What a plan's statement did for `scope`, recorded without deciding anything: with `count` (the
 * shared total it read back after adding the plan's hits) the total is noted; without one (it
 * counted nothing) the hits the plan took over go back to be flushed.
 */
export function recordRateLimit(plan: RateLimitPlan, scope: string, count: number | null): void {
  if (plan.scope !== scope || count === null) abandonRateLimit(plan);
  else land(plan);
  if (plan.delta === 0 || count === null) return;
  const bucket = bucketOf(scope, plan.window);
  bucket.shared = Math.max(bucket.shared, count);
  bucket.readAt = Date.now();
}

/**
 * Finishes the count for `scope`, the caller the statement resolved: with `count` (the shared
 * total the statement read back) as enforceRateLimit's exact path does; without one (`delta` was
 * 0), as enforceRateLimit does. 429 past the limit, saying `message`.
 */
export async function settleRateLimit(
  plan: RateLimitPlan,
  scope: string,
  count: number | null,
  limit = env().rateLimitPerMinute,
  message = perMinute(limit),
): Promise<void> {
  recordRateLimit(plan, scope, count);
  if (plan.delta === 0 || count === null) return enforceRateLimit(scope, limit, message);
  // A plan made without knowing the caller could not take over the hits this process already
  // counted for it and has not flushed: they came first.
  const unflushed = plan.scope === scope ? 0 : bucketOf(scope, plan.window).pending;
  if (count + unflushed > limit) throw limited(message, plan.window, plan.now);
}
