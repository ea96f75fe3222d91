import PgBoss from 'pg-boss';
import { createQueues } from './queues';

/**
 * pg-boss 10's fetch orders waiting jobs by (priority desc, created_on, id) under FOR UPDATE SKIP
 * LOCKED, which its own indexes do not serve: at a 200,000-job backlog each fetch sorted on disk
 * (~370 ms). This partial index matches the order over waiting jobs only (see
 * docs/architecture.md#pg-boss-fetch-index and `npm run bench:send`). pg-boss's schema is its own, so the
 * index is created here, idempotently, after pg-boss has installed or upgraded that schema.
 */
const PGBOSS_FETCH_INDEX = `
  CREATE INDEX IF NOT EXISTS job_fetch_waiting_idx
  ON pgboss.job (name, priority DESC, created_on, id)
  WHERE state < 'active'`;

/**
 * Lets pg-boss create or upgrade its schema, adds the fetch index, and creates every known queue,
 * so web and worker processes can enqueue at once.
 */
export async function installJobQueues(url: string): Promise<void> {
  const boss = new PgBoss({ connectionString: url, supervise: false, schedule: false, max: 1 });
  boss.on('error', () => {});
  await boss.start();
  try {
    await boss.getDb().executeSql(PGBOSS_FETCH_INDEX, []);
    await createQueues(boss);
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}
