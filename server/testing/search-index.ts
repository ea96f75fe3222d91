import { sql } from 'drizzle-orm';
import { db } from '@/server/db/client';
import { SEARCH_GIN_INDEXES } from '@/server/services/search';

/**
 * Pages waiting in the search indexes' GIN pending lists (docs/architecture.md#search-texts), read
 * from their metapages without merging anything (pgstattuple, a contrib extension the tests install).
 */
export async function pendingSearchPages(): Promise<number> {
  await db.execute(sql`create extension if not exists pgstattuple`);
  const [row] = await db.execute<{ pages: number }>(sql`
    select sum((pgstatginindex(i::regclass)).pending_pages)::int as pages
    from unnest(${sql.param(SEARCH_GIN_INDEXES)}::text[]) i`);
  return row!.pages;
}
