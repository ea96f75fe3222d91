import type PgBoss from 'pg-boss';
import type { JobPayload, QueueName } from '@/server/jobs/queues';
import type { Logger } from '@/server/logger';
import type { BatchHandler, JobOutcome } from '@/server/jobs/outcomes';
import { endRetries, logMalformed, parseJobs } from './job-payloads';

/**
 * A fetch → handle → complete loop per queue. pg-boss 10's `work()` sleeps its polling interval
 * even after a full batch (docs/architecture.md#batch-loops: ~batchSize / interval jobs/s); this loop fetches again
 * at once while there is work and only sleeps when the queue is empty. Several loops run side by
 * side; each batch is handled with the handler's own bounded concurrency. Each job's data is
 * parsed with its queue's schema first: the handler gets the valid jobs, typed by the queue, and a
 * malformed one is failed without retry (./job-payloads.ts).
 */
export function startBatchLoop<Q extends QueueName>(
  boss: PgBoss,
  queue: Q,
  options: { batchSize: number; loops: number; idleMs: number },
  handle: BatchHandler<JobPayload<Q>>,
  log: Logger,
): { stop: () => Promise<void> } {
  let stopping = false;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  async function settle(jobs: PgBoss.JobWithMetadata<unknown>[], outcomes: Map<string, JobOutcome>) {
    const done = jobs.filter((j) => outcomes.get(j.id)?.ok !== false).map((j) => j.id);
    if (done.length) await boss.complete(queue, done);
    const final = jobs.filter((j) => {
      const outcome = outcomes.get(j.id);
      return outcome?.ok === false && outcome.retry === false;
    });
    await endRetries(
      boss,
      queue,
      final.map((j) => j.id),
    );
    for (const job of jobs) {
      const outcome = outcomes.get(job.id);
      if (outcome && !outcome.ok) await boss.fail(queue, job.id, { error: outcome.error });
    }
  }

  /** Retries a pg-boss write until the database answers again (or the loop is stopping). */
  async function persist(write: () => Promise<void>) {
    for (let delay = 250; ; delay = Math.min(delay * 2, 5000)) {
      try {
        return await write();
      } catch (err) {
        if (stopping) return;
        log.warn({ queue, err: { message: (err as Error).message } }, 'could not record job outcomes; retrying');
        await sleep(delay);
      }
    }
  }

  async function loop() {
    while (!stopping) {
      let jobs: PgBoss.JobWithMetadata<unknown>[] = [];
      try {
        jobs = (await boss.fetch<unknown>(queue, { batchSize: options.batchSize, includeMetadata: true })) ?? [];
      } catch (err) {
        // Database unreachable: keep trying; pg-boss and postgres.js reconnect on their own.
        log.warn({ queue, err: { message: (err as Error).message } }, 'fetch failed');
        await sleep(1000);
        continue;
      }
      if (jobs.length === 0) {
        await sleep(options.idleMs);
        continue;
      }
      const { valid, malformed } = parseJobs(queue, jobs);
      logMalformed(log, queue, malformed);
      const outcomes = new Map<string, JobOutcome>(malformed.map((m) => [m.job.id, { ok: false, error: m.error, retry: false }]));
      try {
        if (valid.length) for (const [id, outcome] of await handle(valid)) outcomes.set(id, outcome);
      } catch (err) {
        // The handler could not finish (typically: the database went away mid-batch). Fail the
        // jobs so pg-boss retries them after their backoff, instead of holding them until they
        // expire; handlers re-read state and reconcile, so a retry is safe.
        log.error({ queue, err: { message: (err as Error).message } }, 'batch failed; its jobs will be retried');
        const error = `batch failed: ${(err as Error).message}`;
        for (const job of valid) outcomes.set(job.id, { ok: false, error });
      }
      await persist(() => settle(jobs, outcomes));
    }
  }

  const running = Array.from({ length: options.loops }, () => loop());
  return {
    async stop() {
      stopping = true;
      await Promise.all(running);
    },
  };
}
