import { describe, expect, it } from 'vitest';
import { createSql } from '@/db/connect';
import { db, rawSql } from './client';
import { executePrepared, fixedStatement } from './prepared';
import { sql } from 'drizzle-orm';
import { env } from '@/server/env';

describe('the pool', () => {
  it('plans its named statements once per connection (generic plans), as server/db/prepared.ts intends', async () => {
    // The tests run with DATABASE_PREPARE at its default (true): named statements, generic plans.
    expect(env().databasePrepare).toBe(true);
    const [row] = await executePrepared<{ plan_cache_mode: string }>(
      sql`select current_setting('plan_cache_mode') as plan_cache_mode`,
    );
    expect(row!.plan_cache_mode).toBe('force_generic_plan');
    // Every connection of the pool, not only the one that answered first.
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        rawSql().begin(async (tx) => (await tx`show plan_cache_mode`)[0]!.plan_cache_mode as string),
      ),
    );
    expect(new Set(answers)).toEqual(new Set(['force_generic_plan']));
  });

  it('pipelines the hot statements on at most DATABASE_HOT_POOL_SIZE connections of their own, the rest on at most DATABASE_POOL_SIZE, each answered', async () => {
    // The tests run with the defaults, 2 and 6 (server/env.ts).
    expect(env().databaseHotPoolSize).toBe(2);
    expect(env().databasePoolSize).toBe(6);
    const slow = (i: number) => sql`select pg_backend_pid() as pid, ${i}::int as i from pg_sleep(0.02)`;
    const indexes = Array.from({ length: 24 }, (_, i) => i);
    const hot = await Promise.all(indexes.map((i) => executePrepared<{ pid: number; i: number }>(slow(i))));
    const pool = await Promise.all(indexes.map((i) => db.execute<{ pid: number; i: number }>(slow(i))));
    for (const answers of [hot, pool]) expect(answers.map(([row]) => row!.i)).toEqual(indexes);
    const hotPids = new Set(hot.map(([row]) => row!.pid));
    const poolPids = new Set(pool.map(([row]) => row!.pid));
    expect(hotPids.size).toBe(2);
    expect(poolPids.size).toBeGreaterThan(2);
    expect(poolPids.size).toBeLessThanOrEqual(6);
    expect([...hotPids].filter((pid) => poolPids.has(pid))).toEqual([]);
  });

  it('leaves a client created for other uses (migrations, benchmarks, tests) at PostgreSQL’s default', async () => {
    const other = createSql(env().databaseUrl!, { max: 1 });
    try {
      expect((await other`show plan_cache_mode`)[0]!.plan_cache_mode).toBe('auto');
    } finally {
      await other.end();
    }
  });

  it('runs a fixed statement on the pool, or on the transaction it is given (seeing what that transaction set)', async () => {
    const statement = fixedStatement<{ n: number }>(
      (p) => sql`select ${p.n}::int as n, coalesce(current_setting('test.marker', true), '') as marker`,
    );
    const mark = (tx: { execute: typeof db.execute }) => tx.execute(sql`select set_config('test.marker', 'in-tx', true)`);
    expect(await statement<{ n: number; marker: string }>({ n: 1 })).toEqual([{ n: 1, marker: '' }]);
    const onGiven = await db.transaction(async (tx) => {
      await mark(tx);
      return statement<{ n: number; marker: string }>({ n: 2 }, '', tx);
    });
    expect(onGiven).toEqual([{ n: 2, marker: 'in-tx' }]);
  });
});
