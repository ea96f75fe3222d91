import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { recountBusinessReports } from './recount';

/**
 * The backfill of reports' durable rows and rollups (docs/api.md#reports, Backfill): `npm run
 * reports:recount` runs recountBusinessReports for the businesses whose rollups are not counted
 * (every business when they were deployed, one whose zones changed since) or whose history predates
 * the `reports` handler — client messages but no cycle counted yet —, or for the businesses named, or all.
 * Bounded: at most `limit` businesses per run, each recounted 200 conversations per transaction
 * (recountBusinessReports), so a run never holds a long transaction and can be stopped and run again:
 * a business done has its cycles and its rollups and is not picked again.
 */

export type BackfillOptions = {
  /** Recount these businesses (whether or not they have rows already). */
  businessIds?: readonly number[];
  /** Recount every business (after opening hours changed and past figures should follow). */
  all?: boolean;
  /** At most this many businesses this run (default 100). */
  limit?: number;
};

export const DEFAULT_BACKFILL_LIMIT = 100;

/** The businesses a run would recount, in id order. */
export async function businessesToRecount(options: BackfillOptions = {}, tx: Tx = db): Promise<number[]> {
  const limit = options.limit ?? DEFAULT_BACKFILL_LIMIT;
  if (options.businessIds?.length) return [...new Set(options.businessIds)].sort((a, b) => a - b).slice(0, limit);
  const rows = options.all
    ? await tx.execute<{ id: number }>(sql`select id from businesses order by id limit ${limit}`)
    : // Rollups not counted (yet, or again since a zone changed), or client messages but no cycle:
      // history the handler never saw (it counts a cycle from the first).
      await tx.execute<{ id: number }>(sql`
        select b.id from businesses b
        where exists (select 1 from report_rollups r where r.business_id = b.id and not r.ready)
          or (not exists (select 1 from report_cycles rc where rc.business_id = b.id)
            and exists (select 1 from conversations c where c.business_id = b.id
              and exists (select 1 from messages m where m.conversation_id = c.id and m.business_id = b.id
                and m.direction = 'inbound' and m.message_type in ('TEXT', 'EMAIL'))))
        order by b.id limit ${limit}`);
  return rows.map((r) => r.id);
}

/** Recounts the businesses businessesToRecount picks, one after the other; answers conversations recounted per business. */
export async function backfillReports(
  options: BackfillOptions = {},
  log: (line: string) => void = () => {},
  tx: Tx = db,
): Promise<Map<number, number>> {
  const done = new Map<number, number>();
  for (const businessId of await businessesToRecount(options, tx)) {
    const t0 = performance.now();
    const conversations = await recountBusinessReports(businessId, tx);
    done.set(businessId, conversations);
    log(`business ${businessId}: ${conversations} conversations recounted in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  return done;
}
