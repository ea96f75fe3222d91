import { readdirSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import os from 'node:os';
import PgBoss from 'pg-boss';
import { closeDb } from '@/server/db/client';
import { loadEnv } from '@/server/env';
import { bossDb } from '@/server/jobs/boss-db';
import { createQueues } from '@/server/jobs/queues';
import { logger } from '@/server/logger';
import { closeProviders, emailProvider, smsProvider, smsStatusCallbackUrl } from '@/server/providers';
import { startBatchLoop } from './batch-loop';
import { refuseMalformed } from './job-payloads';
import { startEventsThread } from './events-thread';
import { startOutgoingWebhooks } from './outgoing-webhooks';
import { every } from './periodic';
import { exitOnUnhandledRejection } from './rejections';
import { PERIODIC_TASKS, QUEUE_REGISTRATIONS, type WorkerContext } from './registrations';

/**
 * The worker process: starts pg-boss, creates every known queue, starts each queue's handler and
 * each periodic task of ./registrations.ts; on SIGTERM/SIGINT it stops fetching and lets running
 * batches finish.
 */
export async function startWorker(options: { eventLog?: boolean } = {}) {
  const config = loadEnv();
  if (!config.databaseUrl) throw new Error('DATABASE_URL is required by the worker');
  const log = logger.child({ process: 'worker' });
  const warnOf = (err: Error) =>
    log.warn({ err: { message: err.message, code: (err as { code?: string }).code } }, 'pg-boss error');
  // pg-boss's own pool, given to it so a statement whose connection died unsent is sent again (server/jobs/boss-db.ts).
  const database = bossDb({
    connectionString: config.databaseUrl,
    max: 8,
    application_name: 'messaging-worker',
    onError: warnOf,
  });
  const boss = new PgBoss({
    db: database,
    // How soon a job held by a worker that died is expired and retried.
    maintenanceIntervalSeconds: config.workerMaintenanceIntervalSeconds,
  });
  // pg-boss reports connection loss here and keeps polling: a PostgreSQL restart is survived.
  boss.on('error', warnOf);
  await boss.start();
  await createQueues(boss);

  const sms = smsProvider();
  const email = emailProvider();
  const worker: WorkerContext = { config, log, sms, email, statusCallback: smsStatusCallbackUrl() };

  const loops: { stop: () => Promise<void> }[] = [];
  for (const registration of QUEUE_REGISTRATIONS) {
    if (registration.kind === 'loop') {
      const { queue, handle } = registration;
      loops.push(startBatchLoop(boss, queue, registration.loop, (jobs) => handle(jobs, worker), log));
      continue;
    }
    const { queue, handle, schedule } = registration;
    await boss.work(queue, registration.work, async (jobs) => handle(await refuseMalformed(boss, queue, jobs, log), worker));
    if (schedule) await boss.schedule(queue, schedule);
  }
  const periodic = PERIODIC_TASKS.map((task) =>
    every(
      typeof task.everyMs === 'number' ? task.everyMs : task.everyMs(config),
      () => task.run(worker),
      (err) => log.warn({ err: { message: (err as Error).message } }, task.failure),
      task.pauseAfterFailureMs,
    ),
  );

  // The event log's handlers and the outgoing webhooks' sender (./outgoing-webhooks.ts), here unless
  // the caller runs them elsewhere (the worker process: a thread of their own, ./events-thread.ts).
  const webhooksOut = options.eventLog === false ? null : startOutgoingWebhooks(config, log);

  log.info({ sms: sms.name, email: email.name }, 'worker started');
  return {
    boss,
    async stop() {
      for (const task of periodic) task.stop();
      await Promise.all([...loops.map((l) => l.stop()), webhooksOut?.stop()]);
      await boss.stop({ graceful: true, wait: true, timeout: 30_000 });
      await database.close(); // pg-boss closes only a pool it opened itself
      await closeProviders();
    },
  };
}

/**
 * Background sending yields the CPU to interactive work: on cores shared with web processes (one
 * machine, `npm run dev`, a small deployment) a bulk send's worker would otherwise take the cycles
 * an API request or the inbox is waiting for (bench:send). At nice 10 the worker still gets every
 * cycle nobody else wants; on a machine of its own the setting changes nothing. Raising one's own
 * nice value needs no privilege; where the platform refuses it anyway, the worker runs as it is.
 */
function lowerPriority(nice: number, except: number | null, only?: number[]) {
  if (nice === 0) return;
  try {
    // Linux keeps a nice value per thread: the threads V8 and libuv started before this call (the
    // garbage collector's, the compiler's) are lowered one by one; threads started later inherit it.
    // `except`: the event log's thread, which keeps its own (./events-thread.ts).
    const threads = only ?? (process.platform === 'linux' ? readdirSync('/proc/self/task').map(Number) : [0]);
    for (const thread of threads) if (thread !== except) os.setPriority(thread, nice);
  } catch (err) {
    logger.warn({ nice, err: { message: (err as Error).message } }, 'could not lower the worker priority; running as it is');
  }
}

async function main() {
  exitOnUnhandledRejection('unhandled rejection');
  const config = loadEnv();
  // The event log's thread first, so that it keeps the default priority when the rest is lowered.
  // The thread pool of libuv is made now (by this stat), so that it is lowered with the rest rather
  // than started later by the events thread at its priority.
  await stat('.');
  const events = await startEventsThread(logger);
  lowerPriority(config.workerNice, events.tid);
  if (events.tid !== null && config.workerEventsNice > 0) lowerPriority(config.workerEventsNice, null, [events.tid]);
  // Loading its modules, the thread started helpers of its own (the module loader's thread) at its
  // priority: once it runs, they are lowered with the rest. The rest starts then, not while the
  // thread loads: at its higher priority the loading would hold back the first jobs (a job must be
  // done within its expiry).
  await events.ready;
  lowerPriority(config.workerNice, events.tid);
  logger.info({ tid: events.tid, nice: config.workerEventsNice }, 'event log thread started');
  const started = await startWorker({ eventLog: false });
  const worker = {
    async stop() {
      await Promise.all([started.stop(), events.stop()]);
    },
  };
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'worker draining');
    await worker.stop();
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
