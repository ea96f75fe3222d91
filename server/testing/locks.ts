import { sql, type SQL } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';

/**
 * Test helpers that put concurrent transactions in a chosen order: a transaction that holds its
 * row locks until released, and a wait until a statement is queued behind a given backend.
 */

/** Backends of this database waiting on a lock whose query matches `queryLike`, with the pids blocking them. */
export async function lockWaiters(queryLike: string) {
  return db.execute<{ pid: number; blockers: number[] }>(sql`
    select pid, pg_blocking_pids(pid) as blockers from pg_stat_activity
    where datname = current_database() and wait_event_type = 'Lock' and query ilike ${queryLike}`);
}

/** Polls `check` every 10 ms until it holds (5 s at most). */
export async function until(what: string, check: () => Promise<boolean>) {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting until ${what}`);
}

/** Until a statement matching `queryLike` waits on a lock that backend `pid` holds. */
export const untilBlockedBy = (what: string, queryLike: string, pid: number) =>
  until(what, async () => (await lockWaiters(queryLike)).some((w) => w.blockers.includes(pid)));

/**
 * A transaction holding row locks until released (it then commits): a concurrent writer in flight.
 * `work` is a statement, or what a service does on the transaction (its writes held uncommitted).
 */
export function holder(work: SQL | ((tx: Tx) => Promise<unknown>)) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let ready!: (pid: number) => void;
  const pid = new Promise<number>((r) => (ready = r));
  const done = db.transaction(async (tx) => {
    const [me] = await tx.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`);
    await (typeof work === 'function' ? work(tx) : tx.execute(work));
    ready(me!.pid);
    await released;
  });
  return { pid, release, done };
}
