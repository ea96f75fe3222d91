import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';

/**
 * The event log's daily partitions (migration 0024): created ahead, dropped past retention.
 * `events_pYYYYMMDD` holds the UTC day YYYY-MM-DD; `events_default` takes a row whose day has no
 * partition (the worker was down for longer than DAYS_AHEAD), and the day's partition, once
 * created, takes those rows back.
 */
const DAYS_AHEAD = 7;
/** A partition is dropped only when its lock comes at once: pruning waits for the next run rather than queue writers behind it. */
const LOCK_TIMEOUT = '2s';
const DAY_MS = 86_400_000;

const partitionName = (day: Date) => `events_p${day.toISOString().slice(0, 10).replaceAll('-', '')}`;
const dayOf = (name: string): Date | null => {
  const m = /^events_p(\d{4})(\d{2})(\d{2})$/.exec(name);
  return m ? new Date(`${m[1]}-${m[2]}-${m[3]}T00:00:00Z`) : null;
};
const startOfUtcDay = (at: Date) => new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);

export type PartitionChanges = { created: string[]; dropped: string[]; moved: number };

/**
 * Creates the partitions of yesterday to DAYS_AHEAD days from now that are missing (moving into
 * each any rows the default partition holds for its day), and drops those whose whole day is older
 * than `retentionDays`. Each change is its own short transaction.
 */
export async function maintainEventPartitions(retentionDays: number, now = new Date(), tx: Tx = db): Promise<PartitionChanges> {
  const existing = new Set(
    (
      await tx.execute<{ name: string }>(sql`
        select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = 'events'::regclass`)
    ).map((r) => r.name),
  );
  const today = startOfUtcDay(now);
  const changes: PartitionChanges = { created: [], dropped: [], moved: 0 };
  for (let d = -1; d <= DAYS_AHEAD; d++) {
    const day = new Date(today.getTime() + d * DAY_MS);
    const name = partitionName(day);
    if (existing.has(name)) continue;
    changes.moved += await createPartition(name, day, tx);
    changes.created.push(name);
  }
  const cutoff = today.getTime() - retentionDays * DAY_MS;
  for (const name of existing) {
    const day = dayOf(name);
    if (!day || day.getTime() + DAY_MS > cutoff) continue;
    const dropped = await tx
      .transaction(async (tx) => {
        await tx.execute(sql.raw(`set local lock_timeout = '${LOCK_TIMEOUT}'`));
        await tx.execute(sql.raw(`alter table events detach partition ${name}`));
        await tx.execute(sql.raw(`drop table ${name}`));
        return true;
      })
      .catch((err: unknown) => {
        if ((err as { code?: string }).code === '55P03') return false; // lock_not_available: next run
        throw err;
      });
    if (dropped) changes.dropped.push(name);
  }
  return changes;
}

/** The day's partition; rows of that day already in the default partition move into it first. */
async function createPartition(name: string, day: Date, tx: Tx): Promise<number> {
  const from = day.toISOString();
  const to = new Date(day.getTime() + DAY_MS).toISOString();
  return tx.transaction(async (tx) => {
    await tx.execute(sql.raw(`create table ${name} (like events including defaults including constraints)`));
    const moved = await tx.execute(sql`
      with moved as (delete from events_default where occurred_at >= ${from}::timestamptz and occurred_at < ${to}::timestamptz returning *)
      insert into ${sql.raw(name)} select * from moved`);
    await tx.execute(sql.raw(`alter table events attach partition ${name} for values from ('${from}') to ('${to}')`));
    return moved.count;
  });
}
