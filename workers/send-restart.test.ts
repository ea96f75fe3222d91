import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, db } from '@/server/db/client';
import { startEmbeddedPostgres, type EmbeddedDb } from '@/db/embedded';
import { migrateDatabase } from '@/server/migrate';
import { messages } from '@/db/schema';
import { startFakeTwilio, type FakeTwilio } from '@/server/testing/fake-twilio';
import { createSmsNumber, createTenant } from '@/server/testing/factories';
import { api, jsonOf } from '@/server/testing/http';
import { startWorkerProcess, type WorkerProcess } from '@/server/testing/worker-process';

/**
 * The worker process survives a PostgreSQL restart in the middle of a bulk send: nothing lost,
 * nothing sent twice. This file runs on a PostgreSQL of its own, because it stops and restarts it.
 */
const ENV_KEYS = [
  'DATABASE_URL',
  'SMS_PROVIDER',
  'TWILIO_ACCOUNT_SID',
  'TWILIO_AUTH_TOKEN',
  'TWILIO_API_BASE_URL',
  'EMAIL_PROVIDER',
  'WORKER_MAINTENANCE_INTERVAL_SECONDS',
] as const;
const savedEnv = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
process.env.WORKER_MAINTENANCE_INTERVAL_SECONDS = '1';

let pg: EmbeddedDb;
let dir: string;
let fake: FakeTwilio;
let worker: WorkerProcess | undefined;
let tenant: Awaited<ReturnType<typeof createTenant>>;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'messaging-send-restart-'));
  chmodSync(dir, 0o755);
  pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg') });
  await migrateDatabase(pg.url);
  await closeDb();
  // Each create takes a little while, so sends are in flight when PostgreSQL goes away.
  fake = await startFakeTwilio({ latencyMs: 150 });
  Object.assign(process.env, {
    DATABASE_URL: pg.url,
    SMS_PROVIDER: 'twilio',
    TWILIO_ACCOUNT_SID: fake.accountSid,
    TWILIO_AUTH_TOKEN: fake.authToken,
    TWILIO_API_BASE_URL: fake.url,
    EMAIL_PROVIDER: 'sandbox',
  });
  tenant = await createTenant();
  await createSmsNumber(tenant.business.id);
  worker = await startWorkerProcess({ WORKER_MAINTENANCE_INTERVAL_SECONDS: '1', LOG_LEVEL: 'info' });
}, 60_000);

afterAll(async () => {
  await worker?.stop(5_000);
  await closeDb();
  await pg?.stop();
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  for (const k of ENV_KEYS) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Queues 300 SMS (unique bodies); once the fake has received 50 of them, stops PostgreSQL, waits
 * 3 s and starts it again. Returns when it is back.
 */
async function queueBulk(tag: string, first: number): Promise<number[]> {
  const res = await api.post(`/api/v1/businesses/${tenant.business.id}/sms`, {
    headers: { 'x-api-key': tenant.apiKey },
    body: {
      sender_type: 'staff',
      messages: Array.from({ length: 300 }, (_, i) => ({ to_number: `+1415${first + i}`, message: `${tag} ${i}` })),
    },
  });
  expect(res.status).toBe(200);
  const ids = (await jsonOf(res)).message_ids as number[];
  expect(ids).toHaveLength(300);
  return ids;
}

async function bulkSendAcrossRestart(tag: string, first: number) {
  let reached!: () => void;
  const fiftyReached = new Promise<void>((resolve) => (reached = resolve));
  let creates = 0;
  fake.setBehavior((req) => {
    if (req.body.startsWith(`${tag} `) && ++creates === 50) reached();
    return null;
  });
  const ids = await queueBulk(tag, first);

  await fiftyReached;
  await pg.stop();
  const atStop = fake.messages.filter((m) => m.body.startsWith(`${tag} `)).length;
  await sleep(3_000);
  await pg.pg.start();
  return { ids, atStop, back: Date.now() };
}

async function until(fn: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms`);
    await sleep(100);
  }
}

async function sentCount(ids: number[]): Promise<number> {
  try {
    const rows = await db.select({ status: messages.status }).from(messages).where(inArray(messages.id, ids));
    return rows.filter((r) => r.status === 'sent').length;
  } catch {
    return -1; // the test's own pool is reconnecting
  }
}

/** The worker's warn/error log lines, for failure messages. */
const problems = () =>
  worker!
    .output()
    .split('\n')
    .filter((l) => /"level":(40|50|60)/.test(l))
    .map((l) => l.slice(0, 300))
    .slice(-30)
    .join('\n');

function assertEachOnceAtFake(tag: string) {
  const perBody = new Map<string, number>();
  for (const m of fake.messages) if (m.body.startsWith(`${tag} `)) perBody.set(m.body, (perBody.get(m.body) ?? 0) + 1);
  expect(perBody.size).toBe(300); // 0 lost
  expect([...perBody.entries()].filter(([, n]) => n !== 1)).toEqual([]); // 0 twice
}

describe('a PostgreSQL restart during a bulk send', () => {
  it('the worker process survives it; all 300 SMS end sent within 60 s, each exactly once at the provider', async () => {
    // A worker that has been sending already: its postgres.js pool is open. (A connection still
    // starting up when PostgreSQL stops is covered by its own test in send.test.ts.)
    const warm = await queueBulk('Warm-up', 3_100_000);
    await until(async () => (await sentCount(warm)) === 300, 15_000);

    const { ids, atStop, back } = await bulkSendAcrossRestart('Restart', 3_000_000);
    let sent = 0;
    while (Date.now() - back < 60_000 && worker!.alive()) {
      sent = await sentCount(ids);
      if (sent === 300) break;
      await sleep(100);
    }
    const took = Date.now() - back;
    console.log(`restart: ${atStop} SMS at the fake when PostgreSQL stopped; ${sent} of 300 sent ${took} ms after it was back`);

    expect(worker!.alive(), `the worker process exited:\n${worker!.output().split('\n').slice(-30).join('\n')}`).toBe(true);
    expect(sent, `worker log (warnings and errors):\n${problems()}`).toBe(300);
    expect(took).toBeLessThan(60_000);
    assertEachOnceAtFake('Restart');
  }, 75_000);
});
