import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { awaitStatement, startPgProxy, type PgProxy } from '@/server/testing/pg-proxy';
import { createSql } from '@/db/connect';
import { retryingUnsent } from './retry';

/**
 * The pools' rule (docs/architecture.md#lost-connections): a statement whose connection died before
 * anything of it was sent runs again, once, on a fresh connection; one that may have run never
 * does. Connections go through a proxy that can greet a connection with a server's goodbye
 * (57P01) or cut the connections open now.
 */
let proxy: PgProxy;
let pool: ReturnType<typeof createSql>;
const codeOf = (p: PromiseLike<unknown>) =>
  Promise.resolve(p).then(
    () => 'ok',
    (err: { code?: string }) => err.code ?? String(err),
  );

beforeAll(async () => {
  proxy = await startPgProxy(process.env.DATABASE_URL!);
  await createSql(process.env.DATABASE_URL!, { max: 1 }).begin(async (tx) => {
    await tx`create table retry_marks (tag text)`;
  });
});

afterEach(async () => {
  await pool?.end({ timeout: 1 });
});

afterAll(async () => {
  await proxy.close();
});

const marks = async (tag: string) => {
  const direct = createSql(process.env.DATABASE_URL!, { max: 1 });
  try {
    return (await direct`select count(*)::int as n from retry_marks where tag = ${tag}`)[0]!.n as number;
  } finally {
    await direct.end();
  }
};

describe('a statement whose connection died before it was sent', () => {
  it('runs again on a fresh connection: awaited, in values mode (drizzle) and through drizzle', async () => {
    pool = createSql(proxy.url, { max: 1 });
    const retrying = retryingUnsent(pool);
    proxy.greetWithGoodbye(1);
    expect(await retrying.unsafe('select 1 as n')).toEqual([{ n: 1 }]);
    await pool.end();

    pool = createSql(proxy.url, { max: 1 });
    proxy.greetWithGoodbye(1);
    expect(await retryingUnsent(pool).unsafe('select $1::int as n', [2]).values()).toEqual([[2]]);
    await pool.end();

    pool = createSql(proxy.url, { max: 1 });
    proxy.greetWithGoodbye(1);
    expect([...(await drizzle(retryingUnsent(pool)).execute(sql`select 3 as n`))]).toEqual([{ n: 3 }]);
  });

  it('runs once more at most, and the unwrapped pool does not run it again at all', async () => {
    pool = createSql(proxy.url, { max: 1 });
    proxy.greetWithGoodbye(2);
    expect(await codeOf(retryingUnsent(pool).unsafe('select 1'))).toBe('57P01');
    proxy.greetWithGoodbye(1);
    expect(await codeOf(pool.unsafe('select 1'))).toBe('57P01');
  });

  it('begins a transaction again when its callback never started', async () => {
    pool = createSql(proxy.url, { max: 1 });
    let calls = 0;
    proxy.greetWithGoodbye(1);
    const answer = await retryingUnsent(pool).begin(async (tx) => {
      calls++;
      return (await tx`select 4 as n`)[0]!.n as number;
    });
    expect(answer).toBe(4);
    expect(calls).toBe(1);
  });
});

describe('a statement that may have run', () => {
  it('is not sent again when its connection is lost while it runs', async () => {
    pool = createSql(proxy.url, { max: 1 });
    const running = codeOf(retryingUnsent(pool).unsafe(`insert into retry_marks select 'cut' from pg_sleep(2)`));
    await awaitStatement(process.env.DATABASE_URL!, 'pg_sleep(2)', 'running');
    proxy.cut();
    expect(['CONNECTION_CLOSED', 'ECONNRESET']).toContain(await running);
    await awaitStatement(process.env.DATABASE_URL!, 'pg_sleep(2)', 'ended'); // the server finishes the statement whose answer was lost
    expect(await marks('cut')).toBe(1);
  });

  it('fails its transaction when the connection is lost once the callback runs: the callback is not run again', async () => {
    pool = createSql(proxy.url, { max: 1 });
    let calls = 0;
    const outcome = codeOf(
      retryingUnsent(pool).begin(async (tx) => {
        calls++;
        await tx`insert into retry_marks values ('in-tx')`;
        await tx`select pg_sleep(2)`;
      }),
    );
    await awaitStatement(process.env.DATABASE_URL!, 'pg_sleep(2)', 'running');
    proxy.cut();
    expect(['CONNECTION_CLOSED', 'ECONNRESET']).toContain(await outcome);
    expect(calls).toBe(1);
    await awaitStatement(process.env.DATABASE_URL!, 'pg_sleep(2)', 'ended');
    expect(await marks('in-tx')).toBe(0); // its session ended without COMMIT
  });
});
