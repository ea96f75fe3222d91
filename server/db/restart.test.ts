import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bossDb, type BossDb } from '@/server/jobs/boss-db';
import { isDatabaseUnavailable } from '@/server/errors';
import type { InboxEvent } from '@/server/realtime/frames';
import { recordEvents } from '@/server/services/events/record';
import { subscribeBusiness } from '@/server/realtime/listen';
import { createSql } from '@/db/connect';
import { closeDb, db } from './client';
import { startEmbeddedPostgres, type EmbeddedDb } from '@/db/embedded';
import { migrateDatabase } from '@/server/migrate';
import { executePrepared } from './prepared';

/**
 * A PostgreSQL restart is over when the database is back (docs/architecture.md#lost-connections): every
 * pool — the app pool, the hot pool, pg-boss's, the LISTEN connection — answers its first statement
 * after the restart, within a second or so, whatever it had in flight when PostgreSQL stopped; and
 * a transaction whose connection died is neither run again nor continued on the next connection.
 * This file runs on a PostgreSQL of its own, because it stops and restarts it.
 */
const ENV_KEYS = ['DATABASE_URL', 'DATABASE_POOL_SIZE'] as const;
const savedEnv = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));

let pg: EmbeddedDb;
let dir: string;
let boss: BossDb;
let watch: ReturnType<typeof createSql>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const outcome = (p: PromiseLike<unknown>) =>
  Promise.resolve(p).then(
    () => 'ok',
    (err: { code?: string }) => (isDatabaseUnavailable(err) ? 'connection lost' : `${err.code}: ${String(err)}`),
  );

async function until(what: string, fn: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  while (!(await fn().catch(() => false))) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(50);
  }
  return Date.now() - t0;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'messaging-db-restart-'));
  chmodSync(dir, 0o755);
  pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg') });
  // The schema: the live streams' tail reads the event log.
  await migrateDatabase(pg.url);
  await closeDb();
  // Three app connections, so that each has something in flight when PostgreSQL stops.
  Object.assign(process.env, { DATABASE_URL: pg.url, DATABASE_POOL_SIZE: '3' });
  boss = bossDb({ connectionString: pg.url, max: 2, application_name: 'restart-test', onError: () => {} });
  watch = createSql(pg.url, { max: 1 });
  await db.execute(sql`create table restart_marks (tag text)`);
}, 60_000);

afterAll(async () => {
  await closeDb();
  await boss?.close();
  await watch?.end({ timeout: 1 });
  await pg?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  for (const k of ENV_KEYS) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
});

/** Stops PostgreSQL for `downMs`, sending statements to every pool meanwhile as a busy process would. Returns when it is back. */
async function restart(downMs: number): Promise<number> {
  await pg.pg.stop();
  const t0 = Date.now();
  while (Date.now() - t0 < downMs) {
    await Promise.allSettled([db.execute(sql`select 1`), executePrepared(sql`select 1`), boss.executeSql('select 1', [])]);
    await sleep(200);
  }
  await pg.pg.start();
  return Date.now();
}

const sleeping = async () =>
  (
    await watch<
      { n: number }[]
    >`select count(*)::int as n from pg_stat_activity where query like '%pg_sleep(30)%' and pid <> pg_backend_pid()`
  )[0]!.n;

describe('after a PostgreSQL restart', () => {
  it('the first statement on each pool succeeds, within a second or two of PostgreSQL being back', async () => {
    const events: InboxEvent[] = [];
    let interrupted = 0;
    const listening = subscribeBusiness({
      businessId: 7,
      sessionId: 1,
      lastEventId: null,
      push: (e) => events.push(e),
      interrupt: () => interrupted++,
      supersede: () => {},
    });
    if (!listening.ok) throw new Error(listening.message);
    await listening.joined;
    try {
      // In flight when PostgreSQL stops: a transaction on two app connections, a statement on the
      // third, both hot connections, a pg-boss statement.
      const long = sql`select pg_sleep(30)`;
      const inFlight = [
        db.transaction((tx) => tx.execute(long)),
        db.transaction((tx) => tx.execute(long)),
        db.execute(long),
        executePrepared(long),
        executePrepared(long),
        boss.executeSql('select pg_sleep(30)', []),
      ].map(outcome);
      await until('six statements running', async () => (await sleeping()) === 6, 10_000);
      const back = await restart(5_000);
      expect(await Promise.all(inFlight)).toEqual(Array(6).fill('connection lost'));

      // Every connection of every pool at once.
      const first = await Promise.all(
        [
          ...[1, 2, 3].map(() => db.execute(sql`select pg_sleep(0.2)`)),
          ...[1, 2].map(() => executePrepared(sql`select pg_sleep(0.2)`)),
          db.transaction((tx) => tx.execute(sql`select 1`)),
          boss.executeSql('select pg_sleep(0.2)', []),
          boss.executeSql('select pg_sleep(0.2)', []),
        ].map(outcome),
      );
      expect(first).toEqual(Array(8).fill('ok'));
      expect(Date.now() - back).toBeLessThan(3_000);

      // The log's tail reads on: an event appended after the restart reaches the stream open across
      // the gap, which is not interrupted (nothing was lost: it reads from its cursor).
      await recordEvents(
        [
          {
            type: 'conversation.woke',
            businessId: 7,
            conversationId: 1,
            actor: { type: 'system' },
            data: { conversation_id: 1 },
          },
        ],
        db,
      );
      await until('the event after the restart', async () => events.length > 0, 4_000);
      expect(Date.now() - back).toBeLessThan(4_000);
      expect(interrupted).toBe(0);
      expect(events[0]).toEqual({ type: 'conversation.updated', businessId: 7, conversationIds: [1] });
    } finally {
      listening.unsubscribe();
    }
  }, 60_000);

  it('a transaction whose connection died is not run again, and nothing it sends later runs on the next connection', async () => {
    let calls = 0;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let late: Promise<string> | undefined;
    const tx = outcome(
      db.transaction(async (t) => {
        calls++;
        await t.execute(sql`insert into restart_marks values ('before')`);
        await gate; // idle in its transaction when PostgreSQL stops
        late = outcome(t.execute(sql`insert into restart_marks values ('after')`));
        await late;
      }),
    );
    await until('the transaction waiting', async () => calls === 1, 5_000);
    await sleep(100);
    await restart(1_000);
    // The pool's connections are open again (the transaction's among them) when it goes on.
    await Promise.all([1, 2, 3].map(() => db.execute(sql`select pg_sleep(0.1)`)));
    open();
    expect(await tx).toBe('connection lost');
    await until('the late statement settled', async () => late !== undefined, 2_000);
    expect(await late).toBe('connection lost');
    expect(calls).toBe(1);
    const rows = await db.execute<{ tag: string }>(sql`select tag from restart_marks`);
    expect([...rows]).toEqual([]);
  }, 60_000);
});
