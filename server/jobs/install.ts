import PgBoss from 'pg-boss';
import { createQueues, QUEUES } from './queues';

/**
 * pg-boss 10's fetch orders waiting jobs by (priority desc, created_on, id) under FOR UPDATE SKIP
 * LOCKED, which its own indexes do not serve: at a 200,000-job backlog each fetch sorted on disk
 * (~370 ms). This partial index matches the order over waiting jobs only (see
 * docs/architecture.md#pg-boss-fetch-index and `npm run bench:send`). pg-boss's schema is its own, so the
 * index is created here, idempotently, after pg-boss has installed or upgraded that schema.
 *
 * Not on the send-later queues: their waiting jobs are mostly for later (a reminder two days
 * ahead), and with this index the planner walked all of them in created order, filtering on
 * start_after, to find the few due: 190,000 future reminders made each fetch ~2 s of CPU, idle or
 * not (`npm run bench:appointments`). There pg-boss's own (name, start_after) index finds the due
 * ones directly. The index is per queue partition for that reason (one on pgboss.job would reach
 * every partition).
 */
const FUTURE_QUEUES: readonly string[] = [QUEUES.smsSendLater, QUEUES.emailSendLater];

/** The fetch index of one queue's partition (pgboss.queue.partition_name), idempotent. */
export const fetchIndexSql = (partition: string) => {
  if (!/^[a-z0-9_]+$/.test(partition)) throw new Error(`unexpected pg-boss partition name ${partition}`);
  return `CREATE INDEX IF NOT EXISTS ${fetchIndexName(partition)}
  ON pgboss.${partition} (name, priority DESC, created_on, id)
  WHERE state < 'active'`;
};
/** Short enough for PostgreSQL's 63 characters (a partition's name is 57). */
export const fetchIndexName = (partition: string) => `${partition.slice(0, 40)}_fetch_waiting_idx`;

/**
 * Lets pg-boss create or upgrade its schema, creates every known queue, and adds the fetch index to
 * each queue's partition but the send-later ones, so web and worker processes can enqueue at once.
 */
export async function installJobQueues(url: string): Promise<void> {
  const boss = new PgBoss({ connectionString: url, supervise: false, schedule: false, max: 1 });
  boss.on('error', () => {});
  await boss.start();
  try {
    await createQueues(boss);
    const db = boss.getDb();
    // The index of earlier installs, on every partition (the send-later ones included).
    await db.executeSql('DROP INDEX IF EXISTS pgboss.job_fetch_waiting_idx', []);
    const { rows } = (await db.executeSql(
      'SELECT name, partition_name FROM pgboss.queue WHERE partition_name IS NOT NULL',
      [],
    )) as {
      rows: { name: string; partition_name: string }[];
    };
    for (const q of rows) if (!FUTURE_QUEUES.includes(q.name)) await db.executeSql(fetchIndexSql(q.partition_name), []);
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}
