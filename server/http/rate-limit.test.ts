import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { db } from '@/db/client';
import { AppError } from '@/server/errors';
import { createTenant } from '@/server/testing/factories';
import { api, jsonOf } from '@/server/testing/http';
import { enforceRateLimit, flushRateLimits } from './rate-limit';

// Read on first use of the configuration, which happens in this file's first request.
process.env.RATE_LIMIT_PER_MINUTE = '5';
const run = promisify(execFile);

/** Waits, if needed, so the next `seconds` fall inside one minute window. */
async function withinOneWindow(seconds = 15) {
  const second = new Date().getSeconds();
  if (second > 59 - seconds) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
}

/** Outcome of one counted request: 'ok' or 429. */
const hit = (scope: string, limit: number) =>
  enforceRateLimit(scope, limit).then(
    () => 'ok' as const,
    (err) => {
      if (err instanceof AppError && err.code === 'rate_limited') return 429 as const;
      throw err;
    },
  );

/** The shared count of a caller in the current window, as PostgreSQL holds it. */
async function sharedCount(scope: string): Promise<number> {
  const [row] = await db.execute<{ count: number }>(
    sql`select count from rate_limit_buckets where caller_scope = ${scope} and window_start = date_trunc('minute', now())`,
  );
  return row?.count ?? 0;
}

describe('rate limit', () => {
  it('answers 429 with Retry-After past the per-key limit, counting each key on its own', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const path = (id: number) => `/api/v1/businesses/${id}/locations`;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await api.get(path(a.business.id), { headers: { 'x-api-key': a.apiKey } })).status);
    // A minute boundary may fall inside the loop and reset the window: allow for it once.
    if (!statuses.includes(429))
      statuses.push((await api.get(path(a.business.id), { headers: { 'x-api-key': a.apiKey } })).status);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(5);
    expect(statuses).toContain(429);

    const limited = await api.get(path(a.business.id), { headers: { 'x-api-key': a.apiKey } });
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await jsonOf(limited)).toEqual({ detail: expect.stringContaining('Rate limit') });

    expect((await api.get(path(b.business.id), { headers: { 'x-api-key': b.apiKey } })).status).toBe(200);
    // A session is its own caller.
    expect((await api.get(path(a.business.id), { headers: { authorization: `Bearer ${a.sessionToken}` } })).status).toBe(200);
    // Unauthenticated requests are refused before they are counted.
    expect((await api.get(path(a.business.id))).status).toBe(401);
  });

  it('holds across processes: another process sharing the database sees the same count', async () => {
    const { business, apiKey } = await createTenant();
    const path = `/api/v1/businesses/${business.id}/locations`;
    // Keep both halves inside one minute window.
    const second = new Date().getSeconds();
    if (second > 45) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
    // Spend 4 of the key's 5 in another process, then 2 here: the second of ours is refused.
    const child = await run('node_modules/.bin/tsx', ['server/testing/call-api-cli.ts', 'GET', path, '4'], {
      env: { ...process.env, RATE_LIMIT_PER_MINUTE: '5', CALL_API_KEY: apiKey },
    });
    expect(JSON.parse(child.stdout.trim().split('\n').pop()!)).toEqual([200, 200, 200, 200]);
    const ours = [
      (await api.get(path, { headers: { 'x-api-key': apiKey } })).status,
      (await api.get(path, { headers: { 'x-api-key': apiKey } })).status,
    ];
    expect(ours).toEqual([200, 429]);
  }, 60_000);
});

describe('rate limit: counted in memory, flushed to PostgreSQL', () => {
  afterEach(() => vi.restoreAllMocks());

  it('counts every request exactly once: far from the limit without a write each, all of them after a flush', async () => {
    await withinOneWindow();
    const scope = `test:${randomUUID()}`;
    for (let i = 0; i < 200; i++) expect(await hit(scope, 1000)).toBe('ok');
    // The first request read the shared count (a synchronous upsert); the rest were counted here.
    expect(await sharedCount(scope)).toBeLessThan(200);
    await flushRateLimits();
    expect(await sharedCount(scope)).toBe(200);
    await flushRateLimits();
    expect(await sharedCount(scope)).toBe(200);
  });

  it('sees the hits other processes flushed, and near the limit decides exactly: the limit is never exceeded in total', async () => {
    await withinOneWindow();
    const scope = `test:${randomUUID()}`;
    for (let i = 0; i < 30; i++) expect(await hit(scope, 50)).toBe('ok');
    // Another process flushes 15 hits of the same caller.
    await db.execute(sql`update rate_limit_buckets set count = count + 15 where caller_scope = ${scope}`);
    await flushRateLimits();
    expect(await sharedCount(scope)).toBe(45);
    // 45 of 50 taken: within the headroom every request is counted in PostgreSQL, so exactly 5 more pass.
    const outcomes = [];
    for (let i = 0; i < 7; i++) outcomes.push(await hit(scope, 50));
    expect(outcomes).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 429, 429]);
    expect(await sharedCount(scope)).toBe(52);
  });

  it('re-reads the shared count after a quiet spell instead of trusting an old one', async () => {
    await withinOneWindow();
    const scope = `test:${randomUUID()}`;
    expect(await hit(scope, 50)).toBe('ok');
    // Another process takes the caller to its limit while this one is quiet.
    await db.execute(sql`update rate_limit_buckets set count = 50 where caller_scope = ${scope}`);
    const now = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(now + 3000);
    expect(await hit(scope, 50)).toBe(429);
  });
});
