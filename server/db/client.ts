import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import type postgres from 'postgres';
import { createSql } from '@/db/connect';
import { env } from '@/server/env';
import { retryingUnsent } from './retry';
import * as schema from '@/db/schema';

export type Database = PostgresJsDatabase<typeof schema>;
/** A transaction or the database itself: every service function takes `tx = db`. */
export type Tx = Parameters<Parameters<Database['transaction']>[0]>[0] | Database;

type Handles = { sql: postgres.Sql; hotSql: postgres.Sql; db: Database; url: string };

// One pool per process, kept on globalThis so Next.js dev reloads do not open a new pool each time.
const globalForDb = globalThis as unknown as { __db?: Handles };

function databaseUrl(): string {
  const url = env().databaseUrl;
  if (!url) {
    throw new Error(
      'DATABASE_URL is not set. Start the app with `npm run dev` / `npm start` (they start an embedded PostgreSQL), or set DATABASE_URL.',
    );
  }
  return url;
}

function handles(): Handles {
  const url = databaseUrl();
  if (globalForDb.__db?.url !== url) {
    // DATABASE_PREPARE=false (behind a transaction-pooling PgBouncer): the connection-level
    // `prepare: false` wins over every per-query `prepare: true` (executePrepared, drizzle's
    // `.prepare(name)`), so every statement is sent unnamed (server/db/pgbouncer.test.ts).
    // With named statements, their plan is generic (planned once per connection): they are the
    // fixed-shape hot reads of server/db/prepared.ts, whose best plan does not depend on the values, and
    // PostgreSQL's default would re-plan some of them on every run, and for the conversation list
    // planning cost more than running it (docs/performance.md#benchinbox). PostgreSQL applies the setting to unnamed
    // statements with parameters too (searches, writes): they are planned without their values,
    // an array parameter as ~10 elements, so a statement over a list is written to be right
    // whatever its length (a lateral probe per element, never a join of two lists:
    // touchConversations). `conversations/index.test.ts` and `search.test.ts` check the generic plans.
    const prepare = env().databasePrepare;
    const options = { prepare, ...(prepare ? { connection: { plan_cache_mode: 'force_generic_plan' } } : {}) };
    // Both pools send a statement again when its connection died before it was sent (./retry.ts).
    const sql = retryingUnsent(createSql(url, { max: env().databasePoolSize, ...options }));
    // The hot statements' own few connections (hotSql); postgres.js connects lazily, so a process
    // that runs none of them opens none.
    const hotSql = retryingUnsent(createSql(url, { max: env().databaseHotPoolSize, ...options }));
    globalForDb.__db = { sql, hotSql, db: drizzle(sql, { schema, casing: undefined }), url };
  }
  return globalForDb.__db;
}

/**
 * The process's drizzle database (lazily connected: nothing connects until a first statement).
 * Services never use it directly: they take `tx: Tx = db` and run on the transaction they are
 * given, or on this pool (docs/contributing.md#conventions).
 */
export const db: Database = new Proxy({} as Database, {
  get(_t, prop) {
    const target = handles().db as unknown as Record<string | symbol, unknown>;
    const value = target[prop];
    return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
  },
});

/** The pool's drizzle database itself, not the proxy (queries built once per pool, server/db/prepared.ts). */
export function poolDb(): Database {
  return handles().db;
}

/** The raw postgres.js client behind `db` (LISTEN/NOTIFY, pg-boss's executor). */
export function rawSql(): postgres.Sql {
  return handles().sql;
}

/**
 * The connections of the hot one-statement reads (server/db/prepared.ts, outside transactions):
 * DATABASE_HOT_POOL_SIZE of them, 2 by default. postgres.js gives a statement an idle connection
 * when there is one, so with the whole pool (6) a statement under load mostly found one and woke its
 * sleeping backend; on 2 cores that backend then often ran on the web thread's core, which waited
 * for a core (bench:inbox prints that wait: docs/performance.md#benchinbox). On 2 connections the statements are pipelined on
 * backends that are already running, and a long transaction (a bulk send) never holds them.
 */
export function hotSql(): postgres.Sql {
  return handles().hotSql;
}

export async function closeDb(): Promise<void> {
  const h = globalForDb.__db;
  globalForDb.__db = undefined;
  await Promise.all([h?.sql.end({ timeout: 5 }), h?.hotSql.end({ timeout: 5 })]);
}
