import { fillPlaceholders, sql, type Placeholder, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { db, hotSql, poolDb, type Database, type Tx } from './client';

const dialect = new PgDialect();

/**
 * `db.execute(query)` as a named prepared statement. drizzle sends every statement unnamed, which
 * postgres.js runs in two round trips when it has parameters (describe, then execute) and which
 * PostgreSQL plans on every run; a prepared one is kept per connection (by its text), runs in one
 * round trip, and may use a cached generic plan: for a short lookup, planning costs more than
 * executing (bench:inbox). Only for hot statements whose plan does not depend on the values
 * (lookups by id, a business's pages and counts); searches stay unnamed.
 * With DATABASE_PREPARE=false (PgBouncer in transaction mode) the pool's `prepare: false` overrides
 * the `prepare: true` below and the statement goes unnamed, like any other (server/db/client.ts).
 */
export async function executePrepared<T extends Record<string, unknown>>(query: SQL, tx: Tx = db): Promise<T[]> {
  // On a caller's transaction the statement must see (and wait for) that transaction's rows.
  if (tx !== db) return (await tx.execute(query)) as unknown as T[];
  const { sql, params } = dialect.sqlToQuery(query);
  return (await hotSql().unsafe(sql, params as never[], { prepare: true })) as unknown as T[];
}

type Placeholders<P> = { [K in keyof P]: P[K] };

/** Drizzle placeholders named after the fields read from it, typed as the values they stand for. */
const placeholdersFor = <P>() =>
  new Proxy({} as Placeholders<P>, { get: (_t, name) => sql.placeholder(String(name)) as Placeholder });

/**
 * A hot statement of fixed shape, rendered to SQL text once (per `shape`) instead of on every
 * request, then run like executePrepared. `build` receives drizzle placeholders standing for the
 * values, so it must only interpolate them (`${p.businessId}`), never compute with them; anything
 * that changes the text (an optional filter, a different ORDER BY) goes into `shape`, which keys
 * the rendered text. Rendering a statement of a few joined subqueries is a walk of drizzle's whole
 * tree, visible per request in bench:inbox's CPU profile; this does it once.
 * On a transaction (`tx`) the statement is built with the values and runs on it.
 */
export function fixedStatement<P extends Record<string, unknown>>(build: (p: Placeholders<P>, shape: string) => SQL) {
  const rendered = new Map<string, { sql: string; params: unknown[] }>();
  const placeholders = placeholdersFor<P>();
  return async function run<T extends Record<string, unknown>>(values: P, shape = '', tx: Tx = db): Promise<T[]> {
    if (tx !== db) return (await tx.execute(build(values, shape))) as unknown as T[];
    let query = rendered.get(shape);
    if (!query) rendered.set(shape, (query = dialect.sqlToQuery(build(placeholders, shape))));
    const params = fillPlaceholders(query.params, values);
    return (await hotSql().unsafe(query.sql, params as never[], { prepare: true })) as unknown as T[];
  };
}

/**
 * A drizzle query built once per pool (per `key`), typically ending in `.prepare(name)` with
 * `sql.placeholder`s, instead of rebuilding the query builder and its SQL text on every call.
 * Built on the pool itself: a caller with a transaction builds its query on that (preparedQuery).
 */
export function builtOnce<Q>(build: (db: Database, key: string) => Q): (key?: string) => Q {
  const byPool = new WeakMap<Database, Map<string, Q>>();
  return (key = '') => {
    const db = poolDb();
    let built = byPool.get(db);
    if (!built) byPool.set(db, (built = new Map()));
    let q = built.get(key);
    if (q === undefined) built.set(key, (q = build(db, key)));
    return q;
  };
}

/**
 * A drizzle query (ending in `.prepare(name)`) whose values are `p`'s fields: on the pool, built
 * once with placeholders and executed with the values (builtOnce); on a transaction, built on it.
 */
export function preparedQuery<V extends Record<string, unknown>, R>(
  build: (tx: Tx, p: V) => { execute: (values?: Record<string, unknown>) => Promise<R> },
) {
  const onPool = builtOnce((pool) => build(pool, placeholdersFor<V>()));
  return (values: V, tx: Tx = db): Promise<R> => (tx === db ? onPool().execute(values) : build(tx, values).execute());
}
