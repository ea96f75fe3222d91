import { and, eq, inArray, sql } from 'drizzle-orm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { db } from '@/server/db/client';
import { apiKeys, loginCodes, sessions, staff } from '@/db/schema';
import { TTL_CACHE_MS } from '@/server/lib/ttl-cache';
import { createStaff, createTenant, PLATFORM_KEY } from '@/server/testing/factories';
import { api, jsonOf } from '@/server/testing/http';

const platform = () => ({ 'x-api-key': PLATFORM_KEY() });

async function token(businessId: number, staffId: number, ttl?: number) {
  const res = await api.post('/api/v1/auth/token', {
    headers: platform(),
    body: { business_id: businessId, staff_id: staffId, ...(ttl ? { ttl_seconds: ttl } : {}) },
  });
  expect(res.status).toBe(200);
  return jsonOf(res);
}

describe('POST /auth/token', () => {
  it('issues a bearer session with a login link and a 12 h default expiry', async () => {
    const { business, owner } = await createTenant();
    const before = Date.now();
    const body = await token(business.id, owner.id);
    expect(body).toMatchObject({ token_type: 'bearer', business_id: business.id, staff_id: owner.id });
    expect(body.access_token).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    // The login link carries a one-time code, never the bearer token.
    expect(body.login_url).toMatch(/^http:\/\/localhost:3000\/login\?token=lc_[A-Za-z0-9_-]{40,}$/);
    expect(body.login_url).not.toContain(body.access_token);
    expect(body.expires_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const expires = Date.parse(body.expires_at);
    expect(expires - before).toBeGreaterThan(43200_000 - 5_000);
    expect(expires - before).toBeLessThan(43200_000 + 5_000);
    // Only a hash is stored.
    const rows = await db.select().from(sessions).where(eq(sessions.staffId, owner.id));
    expect(rows).toHaveLength(2); // the factory's session and this one
    for (const row of rows) expect(row.tokenHash).not.toContain(body.access_token);
  });

  it('lets a business key issue tokens for its own business only', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const own = await api.post('/api/v1/auth/token', {
      headers: { 'x-api-key': a.apiKey },
      body: { business_id: a.business.id, staff_id: a.owner.id },
    });
    expect(own.status).toBe(200);
    const other = await api.post('/api/v1/auth/token', {
      headers: { 'x-api-key': a.apiKey },
      body: { business_id: b.business.id, staff_id: b.owner.id },
    });
    expect(other.status).toBe(403);
    expect(await jsonOf(other)).toEqual({ detail: expect.any(String) });
  });

  it('answers 422 naming the field for staff outside the business, unknown business, bad ttl', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const wrongStaff = await api.post('/api/v1/auth/token', {
      headers: platform(),
      body: { business_id: a.business.id, staff_id: b.owner.id },
    });
    expect(wrongStaff.status).toBe(422);
    expect((await jsonOf(wrongStaff)).detail[0].loc).toEqual(['body', 'staff_id']);

    const noBusiness = await api.post('/api/v1/auth/token', { headers: platform(), body: { business_id: 999999, staff_id: 1 } });
    expect(noBusiness.status).toBe(422);
    expect((await jsonOf(noBusiness)).detail[0].loc).toEqual(['body', 'business_id']);

    const badTtl = await api.post('/api/v1/auth/token', {
      headers: platform(),
      body: { business_id: a.business.id, staff_id: a.owner.id, ttl_seconds: 10 },
    });
    expect(badTtl.status).toBe(422);
    expect((await jsonOf(badTtl)).detail[0].loc).toEqual(['body', 'ttl_seconds']);

    const inactive = await createStaff(a.business.id, { active: false });
    const res = await api.post('/api/v1/auth/token', {
      headers: platform(),
      body: { business_id: a.business.id, staff_id: inactive.id },
    });
    expect(res.status).toBe(422);
  });

  it('refuses a staff session: issuing tokens needs an API key', async () => {
    const { business, owner, sessionToken } = await createTenant();
    const res = await api.post('/api/v1/auth/token', {
      headers: { authorization: `Bearer ${sessionToken}` },
      body: { business_id: business.id, staff_id: owner.id },
    });
    expect(res.status).toBe(403);
  });
});

describe('authentication failures', () => {
  it('401 without credentials, with an unknown key, an unknown or empty bearer token', async () => {
    const { business, owner } = await createTenant();
    const body = { business_id: business.id, staff_id: owner.id };
    for (const headers of <Record<string, string>[]>[
      {},
      { 'x-api-key': 'nope-not-a-key' },
      { 'x-api-key': '' },
      { authorization: 'Bearer nope' },
      { cookie: 'session=nope' },
    ]) {
      const res = await api.post('/api/v1/auth/token', { headers, body });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(await jsonOf(res)).toEqual({ detail: 'Not authenticated' });
    }
  });

  it('401 for an expired session, and the sliding expiry moves forward on use', async () => {
    const { business, owner } = await createTenant();
    const issued = await token(business.id, owner.id, 120);
    const mine = and(eq(sessions.staffId, owner.id), eq(sessions.ttlSeconds, 120));
    const first = await db.select({ expiresAt: sessions.expiresAt }).from(sessions).where(mine);
    await new Promise((r) => setTimeout(r, 1100));
    const ok = await api.post('/api/v1/session/expire', {
      headers: { authorization: `Bearer ${issued.access_token}` },
      body: { access_token: 'someone-elses-unknown-token' },
    });
    expect(ok.status).toBe(200);
    const slid = await db.select({ expiresAt: sessions.expiresAt }).from(sessions).where(mine);
    expect(slid[0]!.expiresAt.getTime()).toBeGreaterThan(first[0]!.expiresAt.getTime());

    await db
      .update(sessions)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(mine);
    const expired = await api.post('/api/v1/session/expire', {
      headers: { authorization: `Bearer ${issued.access_token}` },
      body: {},
    });
    expect(expired.status).toBe(401);
  });

  it('401 once the staff member is deactivated', async () => {
    const { owner, sessionToken } = await createTenant();
    await db.update(staff).set({ active: false }).where(eq(staff.id, owner.id));
    const res = await api.post('/api/v1/session/expire', { headers: { authorization: `Bearer ${sessionToken}` }, body: {} });
    expect(res.status).toBe(401);
  });
});

describe('POST /session/expire', () => {
  it('expires the calling session when no token is given; it is then rejected', async () => {
    const { sessionToken } = await createTenant();
    const res = await api.post('/api/v1/session/expire', { headers: { authorization: `Bearer ${sessionToken}` } });
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toMatchObject({ success: true, updated: 1 });
    const again = await api.post('/api/v1/session/expire', { headers: { authorization: `Bearer ${sessionToken}` }, body: {} });
    expect(again.status).toBe(401);
  });

  it('with an API key requires access_token (422) and expires only sessions of its business', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const missing = await api.post('/api/v1/session/expire', { headers: { 'x-api-key': a.apiKey }, body: {} });
    expect(missing.status).toBe(422);
    expect((await jsonOf(missing)).detail[0]).toMatchObject({ loc: ['body', 'access_token'], type: 'missing' });

    const foreign = await api.post('/api/v1/session/expire', {
      headers: { 'x-api-key': a.apiKey },
      body: { access_token: b.sessionToken },
    });
    expect(await jsonOf(foreign)).toMatchObject({ updated: 0 });
    // b's session still works
    const still = await api.post('/api/v1/session/expire', {
      headers: { authorization: `Bearer ${b.sessionToken}` },
      body: { access_token: 'unknown' },
    });
    expect(still.status).toBe(200);

    const own = await api.post('/api/v1/session/expire', {
      headers: { 'x-api-key': a.apiKey },
      body: { access_token: a.sessionToken },
    });
    expect(await jsonOf(own)).toMatchObject({ success: true, updated: 1 });
    const platform = await api.post('/api/v1/session/expire', {
      headers: { 'x-api-key': PLATFORM_KEY() },
      body: { access_token: b.sessionToken },
    });
    expect(await jsonOf(platform)).toMatchObject({ updated: 1 });
    const dead = await api.post('/api/v1/session/expire', { headers: { authorization: `Bearer ${b.sessionToken}` }, body: {} });
    expect(dead.status).toBe(401);
  });
});

describe('cookie sessions and CSRF', () => {
  it('a cookie-authenticated write needs a same-origin Origin header', async () => {
    const { sessionToken } = await createTenant();
    const cookie = `theme=dark; session=${sessionToken}`;
    const noOrigin = await api.post('/api/v1/session/expire', { headers: { cookie }, body: { access_token: 'x' } });
    expect(noOrigin.status).toBe(403);
    const evil = await api.post('/api/v1/session/expire', {
      headers: { cookie, origin: 'https://evil.example' },
      body: { access_token: 'x' },
    });
    expect(evil.status).toBe(403);
    const same = await api.post('/api/v1/session/expire', {
      headers: { cookie, origin: 'http://localhost:3000' },
      body: { access_token: 'x' },
    });
    expect(same.status).toBe(200);
    // A bearer token is not sent by browsers on their own: no Origin needed.
    const bearer = await api.post('/api/v1/session/expire', {
      headers: { authorization: `Bearer ${sessionToken}` },
      body: { access_token: 'x' },
    });
    expect(bearer.status).toBe(200);
  });
});

describe('GET /login', () => {
  const codeOf = (loginUrl: string) => new URL(loginUrl).searchParams.get('token')!;
  const sessionsOf = (staffId: number) => db.select({ id: sessions.id }).from(sessions).where(eq(sessions.staffId, staffId));

  it('exchanges a login code for a fresh HttpOnly SameSite=Lax session cookie (not the bearer token) and redirects to the inbox', async () => {
    const { business, owner } = await createTenant();
    const issued = await token(business.id, owner.id);
    const res = await api.get(new URL(issued.login_url).pathname + new URL(issued.login_url).search);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/inbox');
    const cookie = res.headers.get('set-cookie')!;
    const cookieToken = decodeURIComponent(/session=([^;]+)/.exec(cookie)![1]!);
    expect(cookieToken).not.toBe(issued.access_token);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\//);
    expect(cookie).not.toMatch(/Secure/); // PUBLIC_BASE_URL is http in tests
    // The cookie is a working session of the same staff member; so is the bearer token, for the API.
    const me = await api.get(`/api/v1/businesses/${business.id}/staffs/${owner.id}`, {
      headers: { cookie: `session=${cookieToken}` },
    });
    expect(me.status).toBe(200);
    const bearer = await api.get(`/api/v1/businesses/${business.id}/staffs/${owner.id}`, {
      headers: { authorization: `Bearer ${issued.access_token}` },
    });
    expect(bearer.status).toBe(200);
    // Only the keyed hash of the code is stored.
    const [code] = await db
      .select()
      .from(loginCodes)
      .where(inArray(loginCodes.sessionId, sessionsOf(owner.id)));
    expect(code!.codeHash).not.toContain(codeOf(issued.login_url));
    expect(code!.usedAt).not.toBeNull();
  });

  it('a link works once: a replayed link (history, a proxy log) opens nothing', async () => {
    const { business, owner } = await createTenant();
    const issued = await token(business.id, owner.id);
    const path = `/login?token=${encodeURIComponent(codeOf(issued.login_url))}`;
    expect((await api.get(path)).status).toBe(303);
    const again = await api.get(path);
    expect(again.status).toBe(401);
    expect(again.headers.get('set-cookie')).toBeNull();
    expect(await again.text()).toContain('already used or has expired');
  });

  it('a stale link, or one whose session was expired, opens nothing; the bearer token is no login code', async () => {
    const { business, owner } = await createTenant();
    const stale = await token(business.id, owner.id);
    await db
      .update(loginCodes)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(inArray(loginCodes.sessionId, sessionsOf(owner.id)));
    expect((await api.get(`/login?token=${encodeURIComponent(codeOf(stale.login_url))}`)).status).toBe(401);

    const revoked = await token(business.id, owner.id);
    const expired = await api.post('/api/v1/session/expire', {
      headers: platform(),
      body: { access_token: revoked.access_token },
    });
    expect(expired.status).toBe(200);
    expect((await api.get(`/login?token=${encodeURIComponent(codeOf(revoked.login_url))}`)).status).toBe(401);

    const plain = await token(business.id, owner.id);
    expect((await api.get(`/login?token=${encodeURIComponent(plain.access_token)}`)).status).toBe(401);
  });

  it('expiring the API session ends the browser session its link opened', async () => {
    const { business, owner } = await createTenant();
    const issued = await token(business.id, owner.id);
    const res = await api.get(`/login?token=${encodeURIComponent(codeOf(issued.login_url))}`);
    const cookieToken = decodeURIComponent(/session=([^;]+)/.exec(res.headers.get('set-cookie')!)![1]!);
    const path = `/api/v1/businesses/${business.id}/staffs/${owner.id}`;
    expect((await api.get(path, { headers: { cookie: `session=${cookieToken}` } })).status).toBe(200);
    await api.post('/api/v1/session/expire', { headers: platform(), body: { access_token: issued.access_token } });
    expect((await api.get(path, { headers: { cookie: `session=${cookieToken}` } })).status).toBe(401);
  });

  it('explains an unknown link instead of setting a cookie', async () => {
    const res = await api.get('/login?token=not-a-real-token');
    expect(res.status).toBe(401);
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(await res.text()).toContain('expired');
  });
});

describe('API key cache', () => {
  afterEach(() => vi.restoreAllMocks());

  it('a business key revoked in the database is refused once the cache entry expires (within TTL_CACHE_MS)', async () => {
    const { business, apiKey } = await createTenant();
    const path = `/api/v1/businesses/${business.id}/locations`;
    expect((await api.get(path, { headers: { 'x-api-key': apiKey } })).status).toBe(200);
    await db
      .update(apiKeys)
      .set({ revokedAt: sql`now()` })
      .where(eq(apiKeys.businessId, business.id));
    // Remembered for at most the TTL…
    expect((await api.get(path, { headers: { 'x-api-key': apiKey } })).status).toBe(200);
    // …then looked up again, and refused.
    const now = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(now + TTL_CACHE_MS + 1);
    expect((await api.get(path, { headers: { 'x-api-key': apiKey } })).status).toBe(401);
  });

  it('a platform key still gets 404 for a business that does not exist (only existing businesses are remembered)', async () => {
    const { business } = await createTenant();
    expect((await api.get(`/api/v1/businesses/${business.id}/locations`, { headers: platform() })).status).toBe(200);
    expect((await api.get(`/api/v1/businesses/${business.id}/locations`, { headers: platform() })).status).toBe(200);
    const missing = await api.get(`/api/v1/businesses/${business.id + 100000}/locations`, { headers: platform() });
    expect(missing.status).toBe(404);
    expect((await api.get(`/api/v1/businesses/${business.id + 100000}/locations`, { headers: platform() })).status).toBe(404);
  });
});
