import { sql } from 'drizzle-orm';
import { db } from '@/db/client';
import { env } from '@/server/env';
import { AppError } from '@/server/errors';

/**
 * Fixed one-minute windows counted in PostgreSQL, so the limit holds however many web processes
 * serve the same key. One upsert per request; the worker sweeps old windows (services/maintenance.ts).
 */
export async function enforceRateLimit(scope: string): Promise<void> {
  const limit = env().rateLimitPerMinute;
  const rows = await db.execute<{ count: number; retry_after: number }>(sql`
    insert into rate_limit_buckets (caller_scope, window_start, count)
    values (${scope}, date_trunc('minute', now()), 1)
    on conflict (caller_scope, window_start) do update set count = rate_limit_buckets.count + 1
    returning count, ceil(extract(epoch from (window_start + interval '1 minute' - now())))::int as retry_after`);
  const row = rows[0];
  if (row && row.count > limit) {
    throw new AppError('rate_limited', `Rate limit of ${limit} requests per minute exceeded`, {
      retryAfterSeconds: Math.max(1, row.retry_after),
    });
  }
}
