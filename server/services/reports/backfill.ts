import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { recountBusinessReports } from './recount';
import { locationZones, reportZones, type LocationZone } from './zones';

/**
 * The backfill of reports' durable rows and rollups (docs/api.md#reports, Backfill): `npm run
 * reports:recount` runs recountBusinessReports for the businesses whose rollups are not counted
 * (every business when they were deployed, one whose zones changed since) or whose history predates
 * the `reports` handler — client messages but no cycle counted yet —, or for the businesses named, or all.
 * Bounded: at most `limit` businesses per run (but with `all`), each recounted 200 conversations per
 * transaction (recountBusinessReports), so a run never holds a long transaction and can be stopped
 * and run again: a business done has its cycles and its rollups and is not picked again.
 */

export type BackfillOptions =
  | {
      /** Recount these businesses (whether or not they have rows already). */
      businessIds?: readonly number[];
      /** At most this many businesses this run (default 100). */
      limit?: number;
    }
  /** Recount every business (after opening hours changed and past figures should follow): no limit. */
  | { all: true };

export const DEFAULT_BACKFILL_LIMIT = 100;

/** The businesses a run would recount, in id order. */
export async function businessesToRecount(options: BackfillOptions = {}, tx: Tx = db): Promise<number[]> {
  if ('all' in options) return (await tx.execute<{ id: number }>(sql`select id from businesses order by id`)).map((r) => r.id);
  const limit = options.limit ?? DEFAULT_BACKFILL_LIMIT;
  if (options.businessIds?.length) return [...new Set(options.businessIds)].sort((a, b) => a - b).slice(0, limit);
  // Rollups not counted (yet, or again since a writer saw a zone change), or client messages but no
  // cycle: history the handler never saw (it counts a cycle from the first).
  const unready = await tx.execute<{ id: number }>(sql`
    select b.id from businesses b
    where exists (select 1 from report_rollups r where r.business_id = b.id and not r.ready)
      or (not exists (select 1 from report_cycles rc where rc.business_id = b.id)
        and exists (select 1 from conversations c where c.business_id = b.id
          and exists (select 1 from messages m where m.conversation_id = c.id and m.business_id = b.id
            and m.direction = 'inbound' and m.message_type in ('TEXT', 'EMAIL'))))
    order by b.id limit ${limit}`);
  // Rollups counted in zones that are no longer the business's (a zone changed, and no writer has
  // opened them since to mark them unready): their reports read the rows until they are counted again.
  const counted = await tx.execute<{ id: number; zone: string | null; locations: LocationZone[]; zones: string }>(sql`
    select b.id, b.timezone as zone, ${locationZones(sql`b.id`)} as locations, r.zones
    from businesses b join report_rollups r on r.business_id = b.id
    where r.ready`);
  const moved = counted.filter((r) => reportZones(r.zone, r.locations).key !== r.zones).map((r) => r.id);
  return [...new Set([...unready.map((r) => r.id), ...moved])].sort((a, b) => a - b).slice(0, limit);
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
