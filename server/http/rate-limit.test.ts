import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createTenant } from '@/server/testing/factories';
import { api, jsonOf } from '@/server/testing/http';

// Read on first use of the configuration, which happens in this file's first request.
process.env.RATE_LIMIT_PER_MINUTE = '5';
const run = promisify(execFile);

describe('rate limit', () => {
  it('answers 429 with Retry-After past the per-key limit, counting each key on its own', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const path = (id: number) => `/api/v1/businesses/${id}/locations`;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await api.get(path(a.business.id), { headers: { 'x-api-key': a.apiKey } })).status);
    // A minute boundary may fall inside the loop and reset the window: allow for it once.
    if (!statuses.includes(429)) statuses.push((await api.get(path(a.business.id), { headers: { 'x-api-key': a.apiKey } })).status);
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
