import { sql } from 'drizzle-orm';
import { db } from '@/server/db/client';

/** Kept filter counts against a recount (docs/architecture.md#kept-counts), for tests. */

type Key = string; // `${dimension}:${value}`

/** The kept counts of a business: conversation_counts plus the pending deltas, as the read sums them. */
export async function keptCounts(businessId: number): Promise<Map<Key, number>> {
  const rows = await db.execute<{ dimension: string; value: string; n: number }>(sql`
    select dimension, value, sum(n)::int as n from (
      select dimension, value, n from conversation_counts where business_id = ${businessId}
      union all select dimension, value, n from conversation_count_deltas where business_id = ${businessId}
    ) x group by dimension, value having sum(n) <> 0`);
  return new Map(rows.map((r) => [`${r.dimension}:${r.value}`, r.n]));
}

/** The same counts recomputed from the conversations, written independently of the triggers' SQL. */
export async function recountedCounts(businessId: number): Promise<Map<Key, number>> {
  const rows = await db.execute<{ dimension: string; value: string; n: number }>(sql`
    with c as (select * from conversations where business_id = ${businessId})
    select 'status' as dimension, status as value, count(*)::int as n from c group by status
    union all select 'assignee', coalesce(assigned_staff_id::text, ''), count(*)::int from c group by 2
    union all select 'channel', last_channel, count(*)::int from c where last_channel is not null group by 2
    union all select 'location', location_id::text, count(*)::int from c where location_id is not null group by 2
    union all select 'label', label, count(*)::int from c where label is not null group by 2
    union all select 'unread', '', count(*)::int from c where unread_count > 0 having count(*) > 0
    union all select 'flagged', '', count(*)::int from c where flagged_count > 0 having count(*) > 0
    union all select 'possible_opt_out', '', count(*)::int from c where possible_opt_out_message_id is not null having count(*) > 0`);
  return new Map(rows.map((r) => [`${r.dimension}:${r.value}`, r.n]));
}

/** Every key whose kept count differs from the recount: `key: kept ≠ recount`. */
export async function keptCountDifferences(businessId: number): Promise<string[]> {
  const [k, r] = [await keptCounts(businessId), await recountedCounts(businessId)];
  return [...new Set([...k.keys(), ...r.keys()])]
    .filter((key) => (k.get(key) ?? 0) !== (r.get(key) ?? 0))
    .map((key) => `${key}: kept ${k.get(key) ?? 0} ≠ recount ${r.get(key) ?? 0}`)
    .sort();
}
