import { spawn } from 'node:child_process';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db, rawSql } from '@/server/db/client';
import { idempotencyKeys, messages } from '@/db/schema';
import { createSmsNumber, createTenant } from '@/server/testing/factories';
import { api, jsonOf } from '@/server/testing/http';

/**
 * Idempotency keys carry a lease (issue 13): a request that died holding its key no longer blocks
 * the key for a day, and a holder that stalled past its lease cannot commit after another request
 * took the key over. Effects and the stored answer commit together, so a repeat either replays
 * what committed or runs the request itself — exactly once either way.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function tenantWithNumber() {
  const t = await createTenant();
  await createSmsNumber(t.business.id);
  return { ...t, headers: { 'x-api-key': t.apiKey } };
}

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const keyRow = async (key: string) => (await db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, key)))[0];
const sentTo = (to: string) => db.select().from(messages).where(eq(messages.toAddress, to));

/** Holds an exclusive lock on `messages` on its own connection: any insert waits until release. */
async function blockMessageWrites() {
  const conn = await rawSql().reserve();
  await conn`begin`;
  await conn`lock table messages in exclusive mode`;
  return async () => {
    await conn`rollback`;
    conn.release();
  };
}

describe('Idempotency-Key leases', () => {
  it('a request killed mid-transaction: a repeat takes its key over within seconds and runs it once', async () => {
    const t = await tenantWithNumber();
    const to = '+14155550181';
    const body = { sender_type: 'staff', messages: [{ message: 'Killed once', to_number: to }] };
    const path = `/api/v1/businesses/${t.business.id}/sms`;
    const release = await blockMessageWrites();
    // `node --import tsx`: one process (the tsx CLI would leave its node child running after a SIGKILL).
    const child = spawn(process.execPath, ['--import', 'tsx', 'e2e/cli/call-api-cli.ts', 'POST', path, '1'], {
      env: {
        ...process.env,
        CALL_API_KEY: t.apiKey,
        CALL_API_HEADERS: JSON.stringify({ 'idempotency-key': 'killed-1' }),
        CALL_API_BODY: JSON.stringify(body),
      },
      stdio: 'ignore',
    });
    try {
      await until('the child to claim the key', async () => (await keyRow('killed-1'))?.state === 'running');
      await sleep(500); // it is now waiting on the lock, inside its transaction
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      await release();
    }
    expect(await sentTo(to)).toHaveLength(0); // its transaction died with it

    const started = Date.now();
    const repeat = await api.post(path, { headers: { ...t.headers, 'idempotency-key': 'killed-1' }, body });
    expect(repeat.status).toBe(200);
    expect(repeat.headers.get('idempotent-replayed')).toBeNull();
    expect(Date.now() - started).toBeLessThan(9_000); // the lease (5 s), not the 10 s wait or a day
    expect(await sentTo(to)).toHaveLength(1);

    const again = await api.post(path, { headers: { ...t.headers, 'idempotency-key': 'killed-1' }, body });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await jsonOf(again)).toEqual(await jsonOf(repeat));
    expect(await sentTo(to)).toHaveLength(1);
  }, 60_000);

  it('a holder that lost its lease cannot commit; the request that took the key over does, once', async () => {
    const t = await tenantWithNumber();
    const to = '+14155550182';
    const body = { sender_type: 'staff', messages: [{ message: 'Stalled once', to_number: to }] };
    const path = `/api/v1/businesses/${t.business.id}/sms`;
    const headers = { ...t.headers, 'idempotency-key': 'stalled-1' };
    const release = await blockMessageWrites();
    let first: Promise<Response>;
    let second: Promise<Response>;
    try {
      first = api.post(path, { headers, body });
      await until('the first request to claim the key', async () => (await keyRow('stalled-1'))?.state === 'running');
      // The first holder stalls past its lease (as in a long pause): its lease lapses and its token is stale.
      await db
        .update(idempotencyKeys)
        .set({ lockedUntil: sql`now() - interval '1 second'`, holder: 'lapsed' })
        .where(eq(idempotencyKeys.key, 'stalled-1'));
      second = api.post(path, { headers, body });
      await until('the second request to take the key over', async () => {
        const row = await keyRow('stalled-1');
        return row?.holder !== 'lapsed' && row!.lockedUntil!.getTime() > Date.now();
      });
    } finally {
      await release();
    }
    const [a, b] = await Promise.all([first!, second!]);
    expect(a.status).toBe(409);
    expect((await jsonOf(a)).detail).toMatch(/took over/);
    expect(b.status).toBe(200);
    expect(await sentTo(to)).toHaveLength(1);
    expect(await keyRow('stalled-1')).toMatchObject({ state: 'completed', responseStatus: 200 });
  });

  it('a 4xx answer is stored and replayed, and nothing of that request is kept', async () => {
    const t = await tenantWithNumber();
    const path = `/api/v1/businesses/${t.business.id}/sms`;
    const headers = { ...t.headers, 'idempotency-key': 'conflict-1' };
    const body = { sender_type: 'staff', messages: [{ message_id: 2_000_000_000 }] };
    const a = await api.post(path, { headers, body });
    expect(a.status).toBe(422);
    const b = await api.post(path, { headers, body });
    expect(b.status).toBe(422);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
  });
});
