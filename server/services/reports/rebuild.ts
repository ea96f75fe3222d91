import { sql } from 'drizzle-orm';
import type { Tx } from '@/server/db/client';
import { countRowsInto, deleteRollupRows, openRollups, setRollupState } from './rollups';

/**
 * Counts a business's rollups again from its rows (docs/architecture.md#reports): the backfill's
 * last step (./recount.ts, recountBusinessReports), after every conversation was recounted. Not
 * ready meanwhile, so reports read the rows. Each transaction is short: the rollups are emptied a
 * chunk at a time, then the rows are counted a stretch of time at a time, oldest first, moving
 * built_until past each; the handler meanwhile adds what it changes before that point
 * (./rollups.ts, applyRollupDeltas), and the stretches read the rest as it left it.
 */

/** Rollup rows deleted per transaction before a business's are counted again. */
const DELETE_CHUNK = 20_000;
/** A stretch's length: up to the end of a UTC day. */
const DAY_MS = 86_400_000;

/** Empties the business's rollups and counts them again from its rows; false when its state moved meanwhile (start over). */
export async function countRollupsAgain(businessId: number, tx: Tx): Promise<boolean> {
  await tx.transaction(async (tx) => {
    const rollups = await openRollups(businessId, tx);
    await setRollupState(businessId, rollups.zones, { ready: false, builtUntil: null }, tx);
  });
  const empty = (tx: Tx) =>
    tx.transaction(async (tx) => {
      await openRollups(businessId, tx);
      return deleteRollupRows(businessId, DELETE_CHUNK, tx);
    });
  while ((await empty(tx)) > 0);
  // A stretch: up to the end of the UTC day of the next row dated after what is counted (days
  // without rows are skipped), the last one to the end of time.
  let until: string | null = null;
  for (;;) {
    const end = await tx.transaction(async (tx) => {
      const rollups = await openRollups(businessId, tx);
      const moved =
        rollups.ready ||
        (rollups.builtUntil === null ? until !== null : until === null || Date.parse(rollups.builtUntil) !== Date.parse(until));
      if (moved) return null;
      const after = sql`${until ?? '-infinity'}::timestamptz`;
      const [row] = await tx.execute<{ next: string | null }>(sql`
        select to_json(least(
          (select min(started_at) from report_cycles where business_id = ${businessId} and started_at >= ${after}),
          (select min(resolved_at) from report_cycles where business_id = ${businessId} and resolved_at >= ${after}),
          (select min(waiting_since) from report_replies where business_id = ${businessId} and waiting_since >= ${after}),
          (select min(sent_at) from report_messages where business_id = ${businessId} and sent_at >= ${after}))) #>> '{}' as next`);
      const next = row?.next ? Date.parse(row.next) : null;
      const to = next === null ? 'infinity' : new Date((Math.floor(next / DAY_MS) + 1) * DAY_MS).toISOString();
      await countRowsInto(businessId, rollups, until ?? '-infinity', to, tx);
      await setRollupState(
        businessId,
        rollups.zones,
        to === 'infinity' ? { ready: true, builtUntil: null } : { ready: false, builtUntil: to },
        tx,
      );
      return to;
    });
    if (end === null) return false;
    if (end === 'infinity') return true;
    until = end;
  }
}
