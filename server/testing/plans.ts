import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { rawSql } from '@/server/db/client';

/**
 * The plan PostgreSQL makes for `query` without its values, as the pool's connections run it
 * (plan_cache_mode = force_generic_plan, server/db/client.ts): `EXPLAIN (GENERIC_PLAN)`, PostgreSQL 16 and
 * later. Null on an older server (the suite also runs on PostgreSQL 15), where the caller skips.
 */
export async function genericPlan(query: SQL): Promise<string | null> {
  const [{ server_version_num }] =
    (await rawSql()`select current_setting('server_version_num')::int as server_version_num`) as unknown as [
      { server_version_num: number },
    ];
  if (server_version_num < 160000) return null;
  const { sql } = new PgDialect().sqlToQuery(query);
  const rows = (await rawSql().unsafe(`explain (generic_plan) ${sql}`)) as unknown as { 'QUERY PLAN': string }[];
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}
