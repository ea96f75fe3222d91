import { readdirSync } from 'node:fs';
import os from 'node:os';
import PgBoss from 'pg-boss';
import { closeDb } from '@/db/client';
import { loadEnv } from '@/server/env';
import { isDatabaseUnavailable } from '@/server/errors';
import { bossDb } from '@/server/jobs/boss-db';
import { BULK_CHUNK, createQueues, QUEUES } from '@/server/jobs/queues';
import { logger } from '@/server/logger';
import { closeProviders, emailProvider, smsProvider, smsStatusCallbackUrl } from '@/server/providers';
import { compactConversationCounts } from '@/server/services/conversation-counts';
import { wakeSnoozedConversations } from '@/server/services/conversations';
import { runMaintenance } from '@/server/services/maintenance';
import { requeueOrphanedSends, sweepUnprocessedEvents } from '@/server/services/recovery';
import { mergeSearchIndexPendingLists } from '@/server/services/search';
import { applyStatusUpdate } from '@/server/services/messages/lifecycle';
import { failureReason } from '@/server/services/webhooks/events';
import { reprocessEvent } from '@/server/services/webhooks/retry';
import type { JobOutcome } from '@/server/jobs/outcomes';
import { sendEmailBatch } from '@/server/services/messages/send/email';
import { sendSmsBatch } from '@/server/services/messages/send/sms';
import { startBatchLoop } from './batch-loop';
import { importClientsBatch } from './import-clients';
import { refuseMalformed } from './job-payloads';
import { every } from './periodic';

/**
 * The worker process: starts pg-boss, creates every known queue, runs the send loops and the
 * other handlers; on SIGTERM/SIGINT it stops fetching and lets running batches finish.
 */
export async function startWorker() {
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
  const statusCallback = smsStatusCallbackUrl();
  // The same senders on every send queue. A fetch from sms.send / email.send takes many one-message
  // jobs; from the bulk queues one chunk job (BULK_CHUNK messages): either way a loop has at most
  // 50 texts or 20 emails in flight. An idle bulk loop looks again every 500 ms (a campaign can
  // wait that long to start; a reply cannot). Send later (docs/api.md#send-later): jobs started after send_at.
  type SmsQueue = typeof QUEUES.smsSend | typeof QUEUES.smsSendBulk | typeof QUEUES.smsSendLater;
  type EmailQueue = typeof QUEUES.emailSend | typeof QUEUES.emailSendBulk | typeof QUEUES.emailSendLater;
  const smsLoop = (queue: SmsQueue, batchSize: number, loops: number, idleMs: number) =>
    startBatchLoop(boss, queue, { batchSize, loops, idleMs }, (jobs) => sendSmsBatch(jobs, sms, statusCallback, log), log);
  const emailLoop = (queue: EmailQueue, batchSize: number, loops: number, idleMs: number) =>
    startBatchLoop(boss, queue, { batchSize, loops, idleMs }, (jobs) => sendEmailBatch(jobs, email, log), log);
  const loops = [
    smsLoop(QUEUES.smsSend, BULK_CHUNK.sms, 4, 200),
    smsLoop(QUEUES.smsSendBulk, 1, 4, 500),
    emailLoop(QUEUES.emailSend, BULK_CHUNK.email, 2, 250),
    emailLoop(QUEUES.emailSendBulk, 1, 2, 500),
    // As many as the immediate queue: 10,000 texts scheduled for one moment all fall due at once.
    smsLoop(QUEUES.smsSendLater, BULK_CHUNK.sms, 4, 250),
    emailLoop(QUEUES.emailSendLater, BULK_CHUNK.email, 1, 500),
  ];

  await boss.work(QUEUES.sandboxStatus, { batchSize: 100, pollingIntervalSeconds: 0.5 }, async (jobs) => {
    for (const job of await refuseMalformed(boss, QUEUES.sandboxStatus, jobs, log)) {
      const { provider, providerMessageId, status } = job.data;
      await applyStatusUpdate({ provider, providerMessageId }, { status });
    }
  });
  // One outcome per job: an event that still fails must not hold back the others of its batch.
  loops.push(
    startBatchLoop(
      boss,
      QUEUES.webhookRetry,
      { batchSize: 20, loops: 1, idleMs: 1000 },
      async (jobs) => {
        const outcomes = new Map<string, JobOutcome>();
        for (const job of jobs) {
          try {
            await reprocessEvent(job.data.eventId, job.retryCount >= job.retryLimit);
            outcomes.set(job.id, { ok: true });
          } catch (err) {
            outcomes.set(job.id, { ok: false, error: failureReason(err) });
          }
        }
        return outcomes;
      },
      log,
    ),
  );
  loops.push(
    startBatchLoop(
      boss,
      QUEUES.clientsImport,
      { batchSize: 1, loops: 2, idleMs: 1000 },
      (jobs) => importClientsBatch(jobs, log),
      log,
    ),
  );
  // Periodic work, each task one run at a time (./periodic.ts); a failed run is logged.
  const warn = (what: string) => (err: unknown) => log.warn({ err: { message: (err as Error).message } }, what);
  // docs/api.md#snooze: a snoozed conversation is open again within 60 s after its time passes.
  // Every 15 s from each worker (an idempotent UPDATE over a partial index), which is tighter
  // than pg-boss's minute-grained cron.
  const wake = every(
    15_000,
    () => wakeSnoozedConversations().then((woken) => woken && log.info({ woken }, 'snoozed conversations reopened')),
    warn('wake snoozed failed'),
  );
  // docs/architecture.md#kept-counts: the filter counts' pending deltas folded every 5 s, so a
  // read sums a few seconds of changes at most (one compaction at a time across workers).
  const compact = every(5_000, () => compactConversationCounts(), warn('conversation counts compaction failed'));
  // docs/architecture.md#search-texts: the search indexes' pending entries merged every second by
  // the worker, not by whichever bulk insert finds the pending list full. A failure (typically: the
  // worker's role does not own the indexes) pauses the merges for a minute: logged once a minute.
  const mergeSearch = every(
    1_000,
    () => mergeSearchIndexPendingLists(),
    warn('search index merge failed; next attempt in a minute'),
    60_000,
  );
  // Recovery (server/services/recovery.ts): webhook events stored but never processed, and
  // messages in flight whose send job is gone. Every 10 s, one sweep at a time per process.
  const recover = every(
    config.recoverySweepIntervalSeconds * 1000,
    () =>
      Promise.all([
        sweepUnprocessedEvents(log).then((n) => n && log.info({ events: n }, 'unprocessed webhook events swept')),
        requeueOrphanedSends(log),
      ]),
    warn('recovery sweep failed'),
  );
  await boss.work(QUEUES.maintenance, async (jobs) => {
    if ((await refuseMalformed(boss, QUEUES.maintenance, jobs, log)).length === 0) return;
    const swept = await runMaintenance();
    log.info({ swept }, 'maintenance sweep');
  });
  await boss.schedule(QUEUES.maintenance, '*/5 * * * *');

  log.info({ sms: sms.name, email: email.name }, 'worker started');
  return {
    boss,
    async stop() {
      for (const periodic of [wake, compact, mergeSearch, recover]) periodic.stop();
      await Promise.all(loops.map((l) => l.stop()));
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
function lowerPriority(nice: number) {
  if (nice === 0) return;
  try {
    // Linux keeps a nice value per thread: the threads V8 and libuv started before this call (the
    // garbage collector's, the compiler's) are lowered one by one; threads started later inherit it.
    const threads = process.platform === 'linux' ? readdirSync('/proc/self/task').map(Number) : [0];
    for (const thread of threads) os.setPriority(thread, nice);
  } catch (err) {
    logger.warn({ nice, err: { message: (err as Error).message } }, 'could not lower the worker priority; running as it is');
  }
}

async function main() {
  // postgres.js loads array types on each new connection and drops that query's promise; when the
  // connection breaks mid-query (a PostgreSQL restart) the rejection is unhandled (porsager/postgres
  // #1192, #1205). A lost connection is survivable; anything else still stops the process.
  process.on('unhandledRejection', (err) => {
    if (isDatabaseUnavailable(err)) {
      logger.warn(
        { err: { message: (err as Error).message, code: (err as { code?: string }).code } },
        'database connection lost (unhandled in driver); continuing',
      );
      return;
    }
    logger.fatal({ err }, 'unhandled rejection');
    process.exit(1);
  });
  lowerPriority(loadEnv().workerNice);
  const worker = await startWorker();
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
