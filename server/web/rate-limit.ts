import { sql } from 'drizzle-orm';
import { db } from '@/server/db/client';
import { env } from '@/server/env';
import { AppError } from '@/server/errors';
import { logger } from '@/server/logger';

/**
 * Fixed one-minute windows per caller, counted in PostgreSQL (`rate_limit_buckets`) so the limit
 * holds exactly however many web processes serve the same key — without a database write per
 * request.
 *
 * A process serves a caller's requests from tokens it has reserved on the caller's shared row: a
 * reservation adds a block of N to the row in one statement and reads the total back, and the
 * tokens it was granted are those the row had left below the limit before it (`limit − (total −
 * N)`, at most N). The row only ever counts tokens granted or asked for, so the tokens granted to
 * all processes together never exceed the limit: no request is served beyond it, whatever the
 * timing. Blocks shrink as the row fills (an eighth of what was left, at most MAX_BLOCK; one
 * request at a time for a caller's first request of a window in this process), so near the limit
 * every request is decided on the row itself, and a process never sits on many tokens another
 * needs. Concurrent requests of a caller in one process wait for one reservation, not one each.
 *
 * Tokens asked for and not granted, and tokens a process holds for a caller that has gone quiet
 * (IDLE_RETURN_MS), are given back to the row once a second, so a caller that moves to another
 * process can spend them there. A process that dies loses at most what it held (the caller gets
 * fewer, never more); a short-lived one calls flushRateLimits before it exits. Windows follow each
 * process's clock, not the database's.
 */
const WINDOW_MS = 60_000;
const FLUSH_INTERVAL_MS = 1000;
/** A caller quiet for this long in a process gives back the tokens that process holds for it. */
const IDLE_RETURN_MS = 1000;
/** The row's total read longer ago than this says nothing about it now. */
const STALE_AFTER_MS = 2000;
const MAX_BLOCK = 100;

type Bucket = {
  scope: string;
  /** Start of the window (epoch ms). */
  window: number;
  /** Tokens this process holds: requests it may serve without asking PostgreSQL. */
  tokens: number;
  /** The row's total as the last reservation read it; -1 until one has in this window. */
  shared: number;
  /** When `shared` was read (epoch ms). */
  readAt: number;
  /** When this process last served or refused the caller (epoch ms). */
  lastHitAt: number;
  /** A reservation in flight: requests that find no token wait for it. */
  reserving: Promise<void> | null;
  /** Tokens owed back to the row (not granted, or held and unused), given back at the next flush. */
  owed: number;
};

/** By keyOf (caller and window); past windows are dropped at the next flush. */
const buckets = new Map<string, Bucket>();
let flushTimer: NodeJS.Timeout | undefined;
let flushChain: Promise<void> = Promise.resolve();
/** Reservations made by this process, for tests and benchmarks to see how rarely it writes. */
let reservations = 0;
export const rateLimitReservations = () => reservations;

const windowOf = (now: number) => now - (now % WINDOW_MS);
const keyOf = (scope: string, window: number) => `${scope}@${window}`;

function bucketOf(scope: string, window: number): Bucket {
  const key = keyOf(scope, window);
  let bucket = buckets.get(key);
  if (!bucket)
    buckets.set(key, (bucket = { scope, window, tokens: 0, shared: -1, readAt: 0, lastHitAt: 0, reserving: null, owed: 0 }));
  return bucket;
}

/** How many tokens to ask for: one until the row has been read this window, then an eighth of what is left. */
const blockSize = (bucket: Bucket, limit: number) =>
  bucket.shared < 0 ? 1 : Math.min(MAX_BLOCK, Math.max(1, Math.ceil((limit - bucket.shared) / 8)));

/** Adds `block` to the bucket's row; keeps the tokens granted, owes back the rest. */
async function reserve(bucket: Bucket, limit: number): Promise<void> {
  const block = blockSize(bucket, limit);
  reservations++;
  const [row] = await db.execute<{ count: number }>(sql`
    insert into rate_limit_buckets (caller_scope, window_start, count)
    values (${bucket.scope}, to_timestamp(${bucket.window}::bigint / 1000.0), ${block}::int)
    on conflict (caller_scope, window_start) do update set count = rate_limit_buckets.count + excluded.count
    returning count`);
  const total = row!.count;
  const granted = Math.min(block, Math.max(0, limit - (total - block)));
  bucket.tokens += granted;
  bucket.owed += block - granted;
  bucket.shared = total;
  bucket.readAt = Date.now();
  if (bucket.owed > 0) scheduleFlush();
}

/** Counts one request of `scope` against `limit` per minute; 429 with Retry-After past it. */
export async function enforceRateLimit(
  scope: string,
  limit = env().rateLimitPerMinute,
  message = `Rate limit of ${limit} requests per minute exceeded`,
): Promise<void> {
  const now = Date.now();
  const bucket = bucketOf(scope, windowOf(now));
  for (;;) {
    bucket.lastHitAt = Date.now();
    if (bucket.tokens > 0) {
      bucket.tokens -= 1;
      scheduleFlush();
      return;
    }
    // Every token of the window granted a moment ago: refused without asking again.
    const exhausted = bucket.shared >= limit && Date.now() - bucket.readAt <= STALE_AFTER_MS;
    if (exhausted) break;
    if (bucket.reserving) {
      await bucket.reserving;
      continue;
    }
    // Waiters only wait: a reservation that failed is tried again by each (or fails each) itself.
    const reservation = reserve(bucket, limit);
    bucket.reserving = reservation.then(
      () => void (bucket.reserving = null),
      () => void (bucket.reserving = null),
    );
    await reservation;
    // Granted nothing means the row was full (the next turn refuses); a token granted but taken
    // by a request that came in meanwhile means asking again.
  }
  throw new AppError('rate_limited', message, {
    retryAfterSeconds: Math.max(1, Math.ceil((bucket.window + WINDOW_MS - now) / 1000)),
  });
}

/**
 * Gives back the token a request of `scope` just took, in this window: the request was refused by
 * another limit after all (server/web/credentials.ts), and a refused request spends nothing.
 */
export function giveBackRateLimit(scope: string): void {
  const bucket = buckets.get(keyOf(scope, windowOf(Date.now())));
  if (bucket) bucket.tokens += 1;
}

/**
 * Gives back to PostgreSQL what this process owes (tokens not granted; tokens held for callers
 * quiet for IDLE_RETURN_MS, or all held tokens when `everything`), one statement for all callers.
 */
async function flushOnce(everything: boolean): Promise<void> {
  const now = Date.now();
  const current = windowOf(now);
  for (const [key, b] of buckets) if (b.window < current && !b.reserving) buckets.delete(key);
  const due: { b: Bucket; delta: number }[] = [];
  for (const b of buckets.values()) {
    if (b.reserving) continue;
    if (b.tokens > 0 && (everything || now - b.lastHitAt >= IDLE_RETURN_MS)) {
      b.owed += b.tokens;
      b.tokens = 0;
    }
    if (b.owed > 0) due.push({ b, delta: b.owed });
  }
  if (due.length === 0) return;
  for (const d of due) d.b.owed -= d.delta;
  try {
    await db.execute(sql`
      update rate_limit_buckets r set count = greatest(0, r.count - t.d)
      from unnest(${sql.param(due.map((d) => d.b.scope))}::text[], ${sql.param(due.map((d) => d.b.window))}::bigint[],
        ${sql.param(due.map((d) => d.delta))}::int[]) as t(s, w, d)
      where r.caller_scope = t.s and r.window_start = to_timestamp(t.w / 1000.0)`);
  } catch (err) {
    // Still owed: the row over-counts until the next flush (callers get fewer, never more).
    for (const d of due) d.b.owed += d.delta;
    logger.warn({ err: { message: (err as Error).message } }, 'rate limit give-back failed');
  }
}

/**
 * Gives back every token this process holds or owes, so the rows count exactly the requests
 * served. Short-lived processes (and tests) call it before they exit. Runs one after another with
 * the periodic give-back; the promise settles when this one has written.
 */
export function flushRateLimits(): Promise<void> {
  flushChain = flushChain.then(() => flushOnce(true));
  return flushChain;
}

/** About once a second while this process holds or owes tokens. */
function scheduleFlush() {
  if (flushTimer) return;
  flushTimer = setTimeout(() => {
    flushTimer = undefined;
    flushChain = flushChain.then(() => flushOnce(false));
    void flushChain.then(() => {
      if ([...buckets.values()].some((b) => b.tokens > 0 || b.owed > 0)) scheduleFlush();
    });
  }, FLUSH_INTERVAL_MS);
  flushTimer.unref();
}
