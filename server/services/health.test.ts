import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedDb } from '@/db/embedded';
import { migrateDatabase } from '@/server/migrate';
import { closeDb } from '@/server/db/client';
import { createTenant, PLATFORM_KEY } from '@/server/testing/factories';
import { api, jsonOf } from '@/server/testing/http';

// This file runs on a PostgreSQL of its own, because it stops and restarts it.
let pg: EmbeddedDb;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'messaging-restart-'));
  chmodSync(dir, 0o755);
  pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg') });
  await migrateDatabase(pg.url);
  await closeDb();
  process.env.DATABASE_URL = pg.url;
}, 60_000);

afterAll(async () => {
  await closeDb();
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('health', () => {
  it('GET /health and /health/db report ok with the database latency', async () => {
    const res = await api.get('/api/v1/health');
    expect(res.status).toBe(200);
    const body = await jsonOf(res);
    expect(body).toMatchObject({ status: 'ok', version: expect.any(String), uptime_seconds: expect.any(Number) });
    expect(body.services).toEqual([{ name: 'database', status: 'ok', latency_ms: expect.any(Number) }]);
    const db = await api.get('/api/v1/health/db');
    expect(db.status).toBe(200);
    expect(await jsonOf(db)).toMatchObject({ name: 'database', status: 'ok' });
  });
});

describe('a PostgreSQL restart', () => {
  it('makes health degraded and requests 503 while it is down, and everything works within 10 s of its return', async () => {
    const { business, apiKey } = await createTenant();
    const path = `/api/v1/businesses/${business.id}/locations`;
    expect((await api.get(path, { headers: { 'x-api-key': apiKey } })).status).toBe(200);

    await pg.stop();

    const health = await api.get('/api/v1/health');
    expect(health.status).toBe(200);
    expect(await jsonOf(health)).toMatchObject({ status: 'degraded', services: [{ name: 'database', status: 'down' }] });
    const dbHealth = await api.get('/api/v1/health/db');
    expect(dbHealth.status).toBe(503);
    expect(await jsonOf(dbHealth)).toMatchObject({ name: 'database', status: 'down' });
    for (const headers of [{ 'x-api-key': apiKey }, { 'x-api-key': PLATFORM_KEY() }]) {
      const down = await api.get(path, { headers });
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('5');
      expect(await jsonOf(down)).toMatchObject({ detail: expect.stringContaining('database') });
    }

    await pg.pg.start();
    const back = Date.now();
    let status = 0;
    while (Date.now() - back < 10_000) {
      status = (await api.get(path, { headers: { 'x-api-key': apiKey } })).status;
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
    expect(Date.now() - back).toBeLessThan(10_000);
    expect(await jsonOf(await api.get('/api/v1/health'))).toMatchObject({ status: 'ok' });
  });
});
