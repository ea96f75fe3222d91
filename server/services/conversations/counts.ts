import { sql, type SQL } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { fixedStatement } from '@/server/db/prepared';
import { ASSIGNMENT_FILTERS, CHANNELS, CONVERSATION_STATUSES, type CountDimension } from '@/db/schema';
import { logger } from '@/server/logger';

/**
 * The filter counts (docs/api.md#conversations, Filters), kept instead of recomputed
 * (docs/architecture.md#kept-counts). Triggers on `conversations` (migration 0016) append each
 * change's −1/+1 per key to conversation_count_deltas in the writer's transaction; the compaction
 * below folds them into conversation_counts; a read sums the two for one business, so it is exact
 * at its snapshot whether or not a compaction ran, and costs a few dozen rows, not a pass over every
 * conversation of the business.
 */

/** A read that found more pending deltas than this folds its business's deltas before answering. */
const COMPACT_ON_READ_AFTER = 500;
// Arbitrary application-wide advisory lock key: one compaction at a time.
const COMPACTION_LOCK = 7_310_016;

const filtersStatement = fixedStatement<{ businessId: number }>(
  (p) => sql`
    with pending as (
      select dimension, value, n from conversation_count_deltas where business_id = ${p.businessId}
    ), kept as (
      select dimension, value, sum(n)::int as n
      from (select dimension, value, n from conversation_counts where business_id = ${p.businessId}
            union all select dimension, value, n from pending) x
      group by dimension, value
    )
    select
      (select coalesce(json_object_agg(dimension || ':' || value, n), '{}') from kept
       where dimension not in ('label', 'location')) as counts,
      (select coalesce(json_agg(json_build_object('value', value, 'count', n) order by n desc, value), '[]') from kept
       where dimension = 'label' and n <> 0) as labels,
      (select coalesce(json_agg(json_build_object('location_id', l.id, 'name', l.name, 'count', coalesce(k.n, 0)) order by l.name, l.id), '[]')
       from locations l left join kept k on k.dimension = 'location' and k.value = l.id::text
       where l.business_id = ${p.businessId}) as locations,
      (select count(*)::int from pending) as pending`,
);

/** GET /conversations/filters: every value with its count, from the kept counts in one statement. */
export async function conversationFilters(businessId: number, staffId: number | null, tx: Tx = db) {
  const [row] = await filtersStatement<{
    counts: Record<string, number>;
    labels: { value: string; count: number }[];
    locations: { location_id: number; name: string; count: number }[];
    pending: number;
  }>({ businessId }, '', tx);
  const { counts, labels, locations, pending } = row!;
  // The answer above is already exact; folding keeps the next reads short when the worker's
  // compaction is behind (or not running). A failure here is the next compaction's to retry, not
  // this read's.
  if (pending > COMPACT_ON_READ_AFTER)
    await compactConversationCounts(businessId, tx).catch((err: Error) =>
      logger.warn({ err: { message: err.message }, businessId }, 'conversation counts compaction on read failed'),
    );
  const count = (dimension: CountDimension, value = '') => counts[`${dimension}:${value}`] ?? 0;
  // Every conversation has exactly one status, so their sum is the business's total.
  const all = CONVERSATION_STATUSES.reduce((sum, s) => sum + count('status', s), 0);
  const unassigned = count('assignee');
  const byAssignment = {
    all,
    mine: staffId === null ? 0 : count('assignee', String(staffId)),
    unassigned,
    assigned: all - unassigned,
  };
  return {
    statuses: CONVERSATION_STATUSES.map((value) => ({ value, count: count('status', value) })),
    assignments: ASSIGNMENT_FILTERS.filter((v) => v !== 'mine' || staffId !== null).map((value) => ({
      value,
      count: byAssignment[value],
    })),
    channels: CHANNELS.map((value) => ({ value, count: count('channel', value) })),
    labels,
    locations,
    unread: count('unread'),
    flagged: count('flagged'),
    possible_opt_out: count('possible_opt_out'),
  };
}

/**
 * The count of one business's conversations that have one of `values` in `dimension` (any value
 * when `values` is omitted), as a scalar subquery over the kept rows and the pending deltas: exact
 * at the snapshot of the statement it is part of. `values` is an SQL text[] (it may be a placeholder).
 */
export const keptCountSql = (businessId: unknown, dimension: CountDimension, values?: SQL) => sql`(
  select coalesce(sum(n), 0)::int from (
    select n from conversation_counts where business_id = ${businessId} and dimension = ${dimension}
      ${values ? sql`and value = any(${values})` : sql``}
    union all select n from conversation_count_deltas where business_id = ${businessId} and dimension = ${dimension}
      ${values ? sql`and value = any(${values})` : sql``}
  ) kept)`;

/** The list's filters that one kept dimension answers alone (ListFilters in index.ts, by shape). */
export type KeptFilter =
  | { dimension: 'all' }
  | { dimension: CountDimension; values: SQL; negate?: false }
  /** Every conversation but those with the key (unread=false, assignment=assigned…). */
  | { dimension: 'unread' | 'flagged' | 'possible_opt_out' | 'assignee'; values: SQL; negate: true };

/**
 * The list's total from the kept counts, for a filter that one dimension answers: the total of
 * every conversation is the sum of the status keys (each conversation has exactly one status).
 */
export function keptTotalSql(businessId: unknown, filter: KeptFilter): SQL {
  const all = keptCountSql(businessId, 'status');
  if (filter.dimension === 'all') return all;
  const matching = keptCountSql(businessId, filter.dimension, filter.values);
  return filter.negate ? sql`(${all} - ${matching})` : matching;
}

/**
 * Folds the pending deltas (of one business, or of all) into conversation_counts and deletes the
 * keys that fell to zero, in one transaction: a concurrent read sees the deltas either before the
 * fold or in the kept rows after it, never both or neither. Writers only insert deltas, so this
 * never waits on them, nor they on it; deltas committed while it runs are left for the next one.
 * One compaction at a time (an advisory lock; a second one returns at once): only compactions
 * write conversation_counts, so its rows have no contention. Returns how many deltas it folded.
 */
export async function compactConversationCounts(businessId?: number, tx: Tx = db): Promise<number> {
  return tx.transaction(async (tx) => {
    const [lock] = await tx.execute<{ taken: boolean }>(sql`select pg_try_advisory_xact_lock(${COMPACTION_LOCK}) as taken`);
    if (!lock!.taken) return 0;
    const which = businessId === undefined ? sql`` : sql`where business_id = ${businessId}`;
    // One row per key changed, each with the number of deltas folded (one row with nulls when no key changed).
    const changed = await tx.execute<{
      folded: number;
      business_id: number;
      dimension: string;
      value: string;
      n: number | null;
    }>(sql`
      with moved as (
        delete from conversation_count_deltas ${which} returning business_id, dimension, value, n
      ), sums as (
        select business_id, dimension, value, sum(n)::int as n from moved group by 1, 2, 3 having sum(n) <> 0
      ), upserted as (
        insert into conversation_counts as c (business_id, dimension, value, n)
        select business_id, dimension, value, n from sums order by 1, 2, 3
        on conflict (business_id, dimension, value) do update set n = c.n + excluded.n
        returning business_id, dimension, value, n
      )
      select m.folded, u.business_id, u.dimension, u.value, u.n
      from (select count(*)::int as folded from moved) m left join upserted u on true`);
    const emptied = changed.filter((r) => r.n === 0);
    if (emptied.length)
      await tx.execute(sql`
        delete from conversation_counts c
        using unnest(${sql.param(emptied.map((r) => r.business_id))}::int[], ${sql.param(emptied.map((r) => r.dimension))}::text[],
                     ${sql.param(emptied.map((r) => r.value))}::text[]) as e(business_id, dimension, value)
        where c.business_id = e.business_id and c.dimension = e.dimension and c.value = e.value and c.n = 0`);
    return changed[0]!.folded;
  });
}
