import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { createTenant } from '@/server/testing/factories';
import { api } from '@/server/testing/http';
import { flushRateLimits } from './rate-limit';
import { withinOneWindow } from '@/server/testing/rate-window';

// Read on first use of the configuration, which happens in this file's first request.
process.env.RATE_LIMIT_PER_MINUTE = '5';

async function sessionCount(businessId: number): Promise<number> {
  await flushRateLimits();
  const [row] = await db.execute<{ count: number }>(sql`
    select coalesce(sum(b.count), 0)::int as count from rate_limit_buckets b join sessions s on b.caller_scope = 'session:' || s.id
    where s.business_id = ${businessId} and b.window_start = date_trunc('minute', now())`);
  return row!.count;
}

// A session over REST is its own caller for the rate limit (server/web/rate-limit.ts).
describe('a session over REST: its own rate limit', () => {
  it('serves exactly the limit, answers 429 past it, and counts what it served', async () => {
    await withinOneWindow();
    const t = await createTenant();
    const bearer = { authorization: `Bearer ${t.sessionToken}` };
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++)
      statuses.push((await api.get(`/api/v1/businesses/${t.business.id}/locations`, { headers: bearer })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(await sessionCount(t.business.id)).toBe(5);
  });

  it('counts nothing for a request refused before the count: unknown token, another business, cross-origin cookie write', async () => {
    await withinOneWindow();
    const t = await createTenant();
    const other = await createTenant();
    expect(
      (await api.get(`/api/v1/businesses/${t.business.id}/locations`, { headers: { authorization: 'Bearer nope' } })).status,
    ).toBe(401);
    const write = await api.post(`/api/v1/businesses/${t.business.id}/messages/read`, {
      headers: { cookie: `session=${encodeURIComponent(t.sessionToken)}`, origin: 'https://elsewhere.test' },
      body: { is_read: true },
    });
    expect(write.status).toBe(403);
    expect(await sessionCount(t.business.id)).toBe(0);
    // Tenancy after the count, as before: another business's path is a 403, and counted.
    const foreign = await api.get(`/api/v1/businesses/${other.business.id}/locations`, {
      headers: { authorization: `Bearer ${t.sessionToken}` },
    });
    expect(foreign.status).toBe(403);
    expect(await sessionCount(t.business.id)).toBe(1);
  });
});
