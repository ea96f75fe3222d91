import type PgBoss from 'pg-boss';
import type { Logger } from '@/server/logger';

export type JobOutcome = { ok: true } | { ok: false; error: string };
export type BatchHandler<T> = (jobs: PgBoss.JobWithMetadata<T>[]) => Promise<Map<string, JobOutcome>>;

/**
 * A fetch → handle → complete loop per queue. pg-boss 10's `work()` sleeps its polling interval
 * even after a full batch (performance.md: ~batchSize / interval jobs/s); this loop fetches again
 * at once while there is work and only sleeps when the queue is empty. Several loops run side by
 * side; each batch is handled with the handler's own bounded concurrency.
 */
export function startBatchLoop<T>(
  boss: PgBoss,
  queue: string,
  options: { batchSize: number; loops: number; idleMs: number },
  handle: BatchHandler<T>,
  log: Logger,
): { stop: () => Promise<void> } {
  let stopping = false;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  async function settle(jobs: PgBoss.JobWithMetadata<T>[], outcomes: Map<string, JobOutcome>) {
    const done = jobs.filter((j) => outcomes.get(j.id)?.ok !== false).map((j) => j.id);
    if (done.length) await boss.complete(queue, done);
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
      let jobs: PgBoss.JobWithMetadata<T>[] = [];
      try {
        jobs = (await boss.fetch<T>(queue, { batchSize: options.batchSize, includeMetadata: true })) ?? [];
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
      let outcomes: Map<string, JobOutcome>;
      try {
        outcomes = await handle(jobs);
      } catch (err) {
        // The handler could not finish (typically: the database went away mid-batch). Fail the
        // jobs so pg-boss retries them after their backoff, instead of holding them until they
        // expire; handlers re-read state and reconcile, so a retry is safe.
        log.error({ queue, err: { message: (err as Error).message } }, 'batch failed; its jobs will be retried');
        const error = `batch failed: ${(err as Error).message}`;
        outcomes = new Map(jobs.map((j) => [j.id, { ok: false, error }]));
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
