import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { GET as trpcGet } from '@/app/api/trpc/[trpc]/route';
import { db } from '@/server/db/client';
import { parseEnv } from '@/server/env';
import { createTenant, PLATFORM_KEY } from '@/server/testing/factories';
import { api, jsonOf } from '@/server/testing/http';
import { flushRateLimits } from './rate-limit';
import { withinOneWindow } from '@/server/testing/rate-window';

// Read on first use of the configuration, which happens in this file's first request.
process.env.RATE_LIMIT_PER_MINUTE = '8';
process.env.RATE_LIMIT_PER_BUSINESS_PER_MINUTE = '20';
process.env.AUTH_TOKENS_PER_BUSINESS_PER_MINUTE = '3';

/** The shared count of a scope in the current window, every process's hits flushed. */
async function sharedCount(scope: string): Promise<number> {
  await flushRateLimits();
  const [row] = await db.execute<{ count: number }>(
    sql`select count from rate_limit_buckets where caller_scope = ${scope} and window_start = date_trunc('minute', now())`,
  );
  return row?.count ?? 0;
}

const locations = (businessId: number, headers: Record<string, string>) =>
  api.get(`/api/v1/businesses/${businessId}/locations`, { headers });

/** POST /auth/token for the business's owner; the answer as it came. */
const mint = (headers: Record<string, string>, businessId: number, staffId: number) =>
  api.post('/api/v1/auth/token', { headers, body: { business_id: businessId, staff_id: staffId } });

/** Statuses of `n` requests, one after another, and the detail of the last refusal. */
async function burst(n: number, send: () => Promise<Response>) {
  const statuses: number[] = [];
  let refusal: { detail: string; retryAfter: number } | undefined;
  for (let i = 0; i < n; i++) {
    const res = await send();
    statuses.push(res.status);
    if (res.status === 429)
      refusal = {
        detail: ((await jsonOf(res)) as { detail: string }).detail,
        retryAfter: Number(res.headers.get('retry-after')),
      };
  }
  return { statuses, refusal };
}

const tally = (statuses: number[]) =>
  Object.fromEntries([...new Set(statuses)].sort().map((s) => [s, statuses.filter((x) => x === s).length]));

const ownLimit = 'Rate limit of 8 requests per minute exceeded';
const businessLimit = expect.stringContaining('Rate limit of 20 requests per minute for this business');

describe('business-wide budget: sessions a key mints share their business budget', () => {
  it('replays the attack: a key mints sessions and spends each one’s budget; together they stop at the business budget', async () => {
    await withinOneWindow(20);
    const t = await createTenant();
    const other = await createTenant();
    const key = { 'x-api-key': t.apiKey };
    // The key mints three sessions (3 of the key's 8, 3 of the business's 20).
    const tokens: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await mint(key, t.business.id, t.owner.id);
      expect(res.status).toBe(200);
      tokens.push(((await jsonOf(res)) as { access_token: string }).access_token);
    }
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

    // The first session spends its own 8; its 2 refused requests do not spend the business's budget.
    const first = await burst(10, () => locations(t.business.id, bearer(tokens[0]!)));
    expect(first.statuses).toEqual([...Array(8).fill(200), 429, 429]);
    expect(first.refusal?.detail).toBe(ownLimit);
    // The second: 8 more (business 3 + 8 + 8 = 19).
    const second = await burst(8, () => locations(t.business.id, bearer(tokens[1]!)));
    expect(second.statuses).toEqual(Array(8).fill(200));
    // The third has 8 of its own, but the business has 1 left: per-session budgets do not add up.
    const third = await burst(3, () => locations(t.business.id, bearer(tokens[2]!)));
    expect(third.statuses).toEqual([200, 429, 429]);
    expect(third.refusal?.detail).toEqual(businessLimit);
    expect(third.refusal?.retryAfter).toBeGreaterThanOrEqual(1);
    expect(third.refusal?.retryAfter).toBeLessThanOrEqual(60);

    // The key itself (4 of its own 8 used) is refused too, and so is the inbox's door (tRPC).
    const byKey = await locations(t.business.id, key);
    expect(byKey.status).toBe(429);
    expect(Number(byKey.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await jsonOf(byKey)) as { detail: string }).detail).toEqual(businessLimit);
    const input = encodeURIComponent(JSON.stringify({ 0: { json: null } }));
    const viaTrpc = await trpcGet(
      new Request(`http://localhost:3000/api/trpc/session.me?batch=1&input=${input}`, {
        headers: { host: 'localhost:3000', cookie: `session=${encodeURIComponent(t.sessionToken)}` },
      }),
    );
    expect(viaTrpc.status).toBe(429);
    expect(JSON.stringify(await viaTrpc.json())).toContain('for this business');

    // Counted for the business: the 20 it served (the three mints included); a refused request
    // spends nothing, whichever limit refused it.
    expect(await sharedCount(`business:${t.business.id}`)).toBe(20);
    // The key's own: its three mints, not the refused request.
    const [keyRow] = await db.execute<{ id: number }>(sql`select id from api_keys where business_id = ${t.business.id}`);
    expect(await sharedCount(`key:${keyRow!.id}`)).toBe(3);
    // Another business is untouched.
    expect((await locations(other.business.id, { 'x-api-key': other.apiKey })).status).toBe(200);
    expect((await locations(other.business.id, bearer(other.sessionToken))).status).toBe(200);
  });

  it('holds exactly under concurrency: many sessions of a business at once are served the business budget, not one more', async () => {
    await withinOneWindow(20);
    /** A tenant whose key mints 3 sessions (3 of the business's 20), each used `warm` times first. */
    const tenantWithSessions = async (warm: number) => {
      const t = await createTenant();
      const tokens: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await mint({ 'x-api-key': t.apiKey }, t.business.id, t.owner.id);
        tokens.push(((await jsonOf(res)) as { access_token: string }).access_token);
      }
      for (const token of tokens)
        for (let i = 0; i < warm; i++)
          expect((await locations(t.business.id, { authorization: `Bearer ${token}` })).status).toBe(200);
      return { t, tokens };
    };
    /** `each` requests per session, all at once: their statuses. */
    const together = (t: { business: { id: number } }, tokens: string[], each: number) =>
      Promise.all(
        tokens.flatMap((token) =>
          Array.from({ length: each }, () => locations(t.business.id, { authorization: `Bearer ${token}` })),
        ),
      ).then((answers) => answers.map((a) => a.status));

    // Sessions this process has not seen: 24 at once, 8 per session (each within its own limit).
    const fresh = await tenantWithSessions(0);
    const first = await together(fresh.t, fresh.tokens, 8);
    expect(tally(first)).toEqual({ 200: 17, 429: 7 });
    expect(await sharedCount(`business:${fresh.t.business.id}`)).toBe(20);
    // Sessions it knows, with hits counted here and not yet flushed: 9 spent (3 mints, 2 each), 18 at once.
    const known = await tenantWithSessions(2);
    const second = await together(known.t, known.tokens, 6);
    expect(tally(second)).toEqual({ 200: 11, 429: 7 });
    expect(await sharedCount(`business:${known.t.business.id}`)).toBe(20);
  });

  it('sees what other processes counted: near the business budget every request is decided on its row', async () => {
    await withinOneWindow(20);
    const t = await createTenant();
    // Another process took the business to 19 of its 20 meanwhile.
    await db.execute(sql`
      insert into rate_limit_buckets (caller_scope, window_start, count)
      values (${`business:${t.business.id}`}, date_trunc('minute', now()), 19)`);
    const bearer = { authorization: `Bearer ${t.sessionToken}` };
    const { statuses } = await burst(3, () => locations(t.business.id, bearer));
    expect(statuses).toEqual([200, 429, 429]);
    expect(await sharedCount(`business:${t.business.id}`)).toBe(20);
    // The two the business refused gave the session its tokens back.
    expect(await sharedCount(`session:${await sessionIdOf(t.business.id)}`)).toBe(1);
  });

  it('a session another process took past its own limit is refused, and its business is not charged', async () => {
    await withinOneWindow(20);
    const t = await createTenant();
    const session = `session:${await sessionIdOf(t.business.id)}`;
    await db.execute(sql`
      insert into rate_limit_buckets (caller_scope, window_start, count)
      values (${session}, date_trunc('minute', now()), 8), (${`business:${t.business.id}`}, date_trunc('minute', now()), 5)`);
    const { statuses, refusal } = await burst(2, () => locations(t.business.id, { authorization: `Bearer ${t.sessionToken}` }));
    expect(statuses).toEqual([429, 429]);
    expect(refusal?.detail).toBe(ownLimit);
    expect(await sharedCount(session)).toBe(8);
    expect(await sharedCount(`business:${t.business.id}`)).toBe(5);
    // The business's key still has the business's budget.
    expect((await locations(t.business.id, { 'x-api-key': t.apiKey })).status).toBe(200);
  });
});

/** The id of the one session createTenant made for the business. */
async function sessionIdOf(businessId: number): Promise<number> {
  const [row] = await db.execute<{ id: number }>(sql`select id from sessions where business_id = ${businessId}`);
  return row!.id;
}

describe('POST /auth/token: capped per business per minute', () => {
  it('refuses the mint past the cap with 429 and Retry-After, whoever asks; another business is not affected', async () => {
    await withinOneWindow(20);
    const a = await createTenant();
    const b = await createTenant();
    const platform = { 'x-api-key': PLATFORM_KEY() };
    // Another business's key asking for A is refused (403) and spends nothing of A's cap.
    for (let i = 0; i < 3; i++) expect((await mint({ 'x-api-key': b.apiKey }, a.business.id, a.owner.id)).status).toBe(403);

    const { statuses, refusal } = await burst(4, () => mint({ 'x-api-key': a.apiKey }, a.business.id, a.owner.id));
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(refusal?.detail).toBe('At most 3 sessions per business per minute can be created (POST /auth/token)');
    expect(refusal?.retryAfter).toBeGreaterThanOrEqual(1);
    expect(refusal?.retryAfter).toBeLessThanOrEqual(60);
    // The platform key is held to the same cap for A…
    expect((await mint(platform, a.business.id, a.owner.id)).status).toBe(429);
    // …and B still mints, with its key or the platform's.
    expect((await mint({ 'x-api-key': b.apiKey }, b.business.id, b.owner.id)).status).toBe(200);
    expect((await mint(platform, b.business.id, b.owner.id)).status).toBe(200);
    // The refused mint created no session: the factory's and the three.
    const [row] = await db.execute<{ n: number }>(
      sql`select count(*)::int as n from sessions where business_id = ${a.business.id}`,
    );
    expect(row!.n).toBe(4);
  });
});

describe('settings', () => {
  it('the business budget defaults to 10 × the per-credential limit; the mint cap to 60; both bounded', () => {
    expect(parseEnv({}).rateLimitPerBusinessPerMinute).toBe(6000);
    expect(parseEnv({ RATE_LIMIT_PER_MINUTE: '100' }).rateLimitPerBusinessPerMinute).toBe(1000);
    expect(
      parseEnv({ RATE_LIMIT_PER_MINUTE: '100', RATE_LIMIT_PER_BUSINESS_PER_MINUTE: '150' }).rateLimitPerBusinessPerMinute,
    ).toBe(150);
    expect(parseEnv({}).authTokensPerBusinessPerMinute).toBe(60);
    expect(() => parseEnv({ RATE_LIMIT_PER_BUSINESS_PER_MINUTE: '0' })).toThrow(/RATE_LIMIT_PER_BUSINESS_PER_MINUTE/);
    expect(() => parseEnv({ AUTH_TOKENS_PER_BUSINESS_PER_MINUTE: 'many' })).toThrow(/AUTH_TOKENS_PER_BUSINESS_PER_MINUTE/);
  });
});
