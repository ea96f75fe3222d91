import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { ambientTransaction, rawSql } from './client';

const dialect = new PgDialect();

/**
 * `db.execute(query)` as a named prepared statement. drizzle sends every statement unnamed, which
 * postgres.js runs in two round trips when it has parameters (describe, then execute) and which
 * PostgreSQL plans on every run; a prepared one is kept per connection (by its text), runs in one
 * round trip, and may use a cached generic plan: for a short lookup, planning costs more than
 * executing (bench:inbox). Only for hot statements whose plan does not depend on the values
 * (lookups by id, a business's pages and counts); searches stay unnamed, planned for their term.
 * With DATABASE_PREPARE=false (PgBouncer in transaction mode) the pool's `prepare: false` overrides
 * the `prepare: true` below and the statement goes unnamed, like any other (db/client.ts).
 */
export async function executePrepared<T extends Record<string, unknown>>(query: SQL): Promise<T[]> {
  // Inside an ambient transaction the statement must see (and wait for) that transaction's rows.
  const tx = ambientTransaction();
  if (tx) return (await tx.execute(query)) as unknown as T[];
  const { sql, params } = dialect.sqlToQuery(query);
  return (await rawSql().unsafe(sql, params as never[], { prepare: true })) as unknown as T[];
}
