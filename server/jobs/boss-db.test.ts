import { EventEmitter } from 'node:events';
import type { PoolClient, QueryResult } from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSql } from '@/db/connect';
import { awaitStatement, startPgProxy, type PgProxy } from '@/server/testing/pg-proxy';
import { bossDb, executeSql, type BossDb } from './boss-db';

/**
 * pg-boss's pool (the worker's) follows the rule of every pool (docs/architecture.md#lost-connections): a
 * statement whose connection died before it was sent runs again once; one that may have run never.
 */
let proxy: PgProxy;
let database: BossDb | undefined;
const codeOf = (p: PromiseLike<unknown>) =>
  Promise.resolve(p).then(
    () => 'ok',
    (err: { code?: string }) => err.code ?? String(err),
  );

beforeAll(async () => {
  proxy = await startPgProxy(process.env.DATABASE_URL!);
  const direct = createSql(process.env.DATABASE_URL!, { max: 1 });
  await direct`create table boss_db_marks (tag text)`;
  await direct.end();
});

afterEach(async () => {
  await database?.close();
  database = undefined;
});

afterAll(async () => {
  await proxy.close();
});

const open = () =>
  (database = bossDb({ connectionString: proxy.url, max: 1, application_name: 'boss-db-test', onError: () => {} }));

describe("pg-boss's pool", () => {
  it('sends a statement again when its connection was refused by a server saying goodbye (57P01) before anything was sent', async () => {
    proxy.greetWithGoodbye(1);
    expect((await open().executeSql('select $1::int as n', [5])).rows).toEqual([{ n: 5 }]);
  });

  it('sends it again once at most', async () => {
    proxy.greetWithGoodbye(2);
    expect(await codeOf(open().executeSql('select 1', []))).toBe('57P01');
  });

  it('sends it again when the client had lost its connection and refused the statement unsent', async () => {
    const refused = new Error('Client has encountered a connection error and is not queryable');
    const released: unknown[] = [];
    const client = (answer: () => Promise<QueryResult>) =>
      Object.assign(new EventEmitter(), { query: answer, release: (err?: unknown) => released.push(err) });
    const clients = [client(() => Promise.reject(refused)), client(() => Promise.resolve({ rows: [{ n: 6 }], rowCount: 1 }))];
    const pool = { connect: async () => clients.shift() as unknown as PoolClient };
    expect((await executeSql(pool, 'select 6 as n')).rows).toEqual([{ n: 6 }]);
    expect(released).toEqual([refused, undefined]); // the dead client leaves the pool
  });

  it('does not send again a statement that may have run: its connection lost while it ran', async () => {
    const running = codeOf(open().executeSql(`insert into boss_db_marks select 'cut' from pg_sleep(2)`, []));
    await awaitStatement(process.env.DATABASE_URL!, 'pg_sleep(2)', 'running');
    proxy.cut();
    expect(await running).toMatch(/^(ECONNRESET|Error: Connection terminated unexpectedly)$/);
    await awaitStatement(process.env.DATABASE_URL!, 'pg_sleep(2)', 'ended'); // the server finishes the statement whose answer was lost
    const direct = createSql(process.env.DATABASE_URL!, { max: 1 });
    try {
      expect((await direct`select count(*)::int as n from boss_db_marks where tag = 'cut'`)[0]!.n).toBe(1);
    } finally {
      await direct.end();
    }
  });
});
