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
 * decision is exact, as with a write per request.
 *
 * The trade-off: hits other processes took in the last two seconds or so may not be visible here
 * yet, so the limit can be exceeded only if, within that time, the caller's requests across
 * processes take the count from below the headroom to beyond the limit (more than 60 requests at the
 * default 600/minute). A process that dies loses its last second of counts (a short-lived one calls
 * flushRateLimits before it exits). Windows follow each process's clock, not the database's.
 */
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
  /** When `shared` was read (epoch ms); 0 until this process has read it in this window. */
  readAt: number;
};

/** By keyOf (caller and window); past windows stay until their hits are flushed. */
const buckets = new Map<string, Bucket>();
let flushTimer: NodeJS.Timeout | undefined;
let flushChain: Promise<void> = Promise.resolve();

const windowOf = (now: number) => now - (now % WINDOW_MS);

const keyOf = (b: { scope: string; window: number }) => `${b.scope}@${b.window}`;

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
  for (const [key, b] of buckets) if (b.window < current && b.pending === 0) buckets.delete(key);
  const due = [...buckets.values()].filter((b) => b.pending > 0).map((b) => ({ b, delta: b.pending }));
  if (due.length === 0) return;
  for (const d of due) d.b.pending -= d.delta;
  try {
    const counts = await addToShared(due.map(({ b, delta }) => ({ scope: b.scope, window: b.window, delta })));
    const readAt = Date.now();
    for (const { b } of due) {
      b.shared = Math.max(b.shared, counts.get(keyOf(b)) ?? 0);
      b.readAt = readAt;
    }
  } catch (err) {
    // Kept for the next flush: counts are late, never lost while the process lives.
    for (const d of due) d.b.pending += d.delta;
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

/** Counts one request of `scope` against `limit` per minute; 429 with Retry-After past it. */
export async function enforceRateLimit(scope: string, limit = env().rateLimitPerMinute): Promise<void> {
  const now = Date.now();
  const window = windowOf(now);
  const key = keyOf({ scope, window });
  let bucket = buckets.get(key);
  if (!bucket) buckets.set(key, (bucket = { scope, window, shared: 0, pending: 0, readAt: 0 }));

  let count: number;
  if (now - bucket.readAt <= STALE_AFTER_MS && bucket.shared + bucket.pending + 1 <= limit - headroom(limit)) {
    bucket.pending += 1;
    count = bucket.shared + bucket.pending;
    scheduleFlush();
  } else {
    // Exact: this hit (with any unflushed ones) added now and the shared total read back. Hits
    // counted locally while the statement runs stay in `pending` for the next flush.
    const delta = bucket.pending + 1;
    bucket.pending = 0;
    try {
      count = (await addToShared([{ scope, window, delta }])).get(key) ?? delta;
    } catch (err) {
      bucket.pending += delta;
      throw err;
    }
    bucket.shared = Math.max(bucket.shared, count);
    bucket.readAt = Date.now();
  }
  if (count > limit) {
    throw new AppError('rate_limited', `Rate limit of ${limit} requests per minute exceeded`, {
      retryAfterSeconds: Math.max(1, Math.ceil((window + WINDOW_MS - now) / 1000)),
    });
  }
}

/**
 * enforceRateLimit split in two around a statement that also resolves the caller (a session, whose
 * scope is known only once its token is looked up), so credentials and rate limit cost one round
 * trip together (server/http/credentials.ts). planRateLimit decides, from what this process knows
 * of `scope` (the caller it expects, if any), whether the statement must add hits to the shared row
 * (`delta` > 0: this request and the unflushed ones it takes over) or the request will be decided
 * locally (`delta` 0); countHitsSql is that addition, as a CTE; settleRateLimit finishes the count.
 */
export type RateLimitPlan = { scope: string | undefined; window: number; delta: number; taken: number; now: number };

export function planRateLimit(scope: string | undefined, limit = env().rateLimitPerMinute): RateLimitPlan {
  const now = Date.now();
  const window = windowOf(now);
  const bucket = scope === undefined ? undefined : buckets.get(keyOf({ scope, window }));
  if (bucket && now - bucket.readAt <= STALE_AFTER_MS && bucket.shared + bucket.pending + 1 <= limit - headroom(limit)) {
    return { scope, window, delta: 0, taken: 0, now };
  }
  const taken = bucket?.pending ?? 0;
  if (bucket) bucket.pending = 0;
  return { scope, window, delta: taken + 1, taken, now };
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

/** Puts back the hits a plan took over when its statement failed or resolved no caller. */
export function abandonRateLimit(plan: RateLimitPlan): void {
  if (plan.scope === undefined || plan.taken === 0) return;
  const key = keyOf({ scope: plan.scope, window: plan.window });
  let bucket = buckets.get(key);
  if (!bucket) buckets.set(key, (bucket = { scope: plan.scope, window: plan.window, shared: 0, pending: 0, readAt: 0 }));
  bucket.pending += plan.taken;
  scheduleFlush();
}

/**
 * Finishes the count for `scope`, the caller the statement resolved: with `count` (the shared
 * total the statement read back) as enforceRateLimit's exact path does; without one (`delta` was
 * 0), as enforceRateLimit does. 429 past the limit.
 */
export async function settleRateLimit(
  plan: RateLimitPlan,
  scope: string,
  count: number | null,
  limit = env().rateLimitPerMinute,
): Promise<void> {
  if (plan.scope !== undefined && plan.scope !== scope) abandonRateLimit(plan);
  if (plan.delta === 0 || count === null) return enforceRateLimit(scope, limit);
  const key = keyOf({ scope, window: plan.window });
  let bucket = buckets.get(key);
  if (!bucket) buckets.set(key, (bucket = { scope, window: plan.window, shared: 0, pending: 0, readAt: 0 }));
  bucket.shared = Math.max(bucket.shared, count);
  bucket.readAt = Date.now();
  if (count > limit) {
    throw new AppError('rate_limited', `Rate limit of ${limit} requests per minute exceeded`, {
      retryAfterSeconds: Math.max(1, Math.ceil((plan.window + WINDOW_MS - plan.now) / 1000)),
    });
  }
}
