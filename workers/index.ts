import PgBoss from 'pg-boss';
import { closeDb } from '@/db/client';
import { loadEnv } from '@/server/env';
import { createQueues, QUEUES } from '@/server/jobs/queues';
import { logger } from '@/server/logger';
import { sweepExpiredRows } from '@/server/services/maintenance';

/**
 * The worker process: starts pg-boss, creates every known queue, registers the handlers, and on
 * SIGTERM/SIGINT stops taking jobs and lets the running ones finish before exiting.
 */
export async function startWorker() {
  const config = loadEnv();
  if (!config.databaseUrl) throw new Error('DATABASE_URL is required by the worker');
  const log = logger.child({ process: 'worker' });
  const boss = new PgBoss({ connectionString: config.databaseUrl, max: 4, application_name: 'messaging-worker' });
  // pg-boss reports connection loss here and keeps polling: a PostgreSQL restart is survived.
  boss.on('error', (err) => log.warn({ err: { message: err.message, code: (err as { code?: string }).code } }, 'pg-boss error'));
  await boss.start();
  await createQueues(boss);

  await boss.work(QUEUES.maintenance, async () => {
    const swept = await sweepExpiredRows();
    log.info({ swept }, 'maintenance sweep');
  });
  await boss.schedule(QUEUES.maintenance, '*/5 * * * *');

  log.info('worker started');
  return boss;
}

async function main() {
  const boss = await startWorker();
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'worker draining');
    await boss.stop({ graceful: true, wait: true, timeout: 30_000 });
    await closeDb();
    logger.info('worker stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

if (process.argv[1] && /workers\/index\.ts$/.test(process.argv[1])) {
  main().catch((err) => {
    logger.fatal({ err }, 'worker failed to start');
    process.exit(1);
  });
}
