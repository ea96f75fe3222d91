import type PgBoss from 'pg-boss';
import { parseJobPayload, type JobPayload, type QueueName } from '@/server/jobs/queues';
import type { Logger } from '@/server/logger';

/**
 * Workers parse every job's data with its queue's schema (server/jobs/queues.ts) before handling
 * it: enqueue only checks types at compile time, and pgboss.job can hold anything (an older
 * release's shape, a hand-written job). A malformed payload will never become valid, so it is not
 * retried: the job is failed at once (its queue's retry policy is for transient trouble) with an
 * error naming the queue and the zod issues, logged, and kept in pgboss.job as `failed`, or moved to
 * its queue's dead letter, for a person to look at. Its siblings in the batch are handled normally.
 */

export type Malformed<J> = { job: J; error: string };

/** Splits fetched jobs into those whose data parses (carrying the parsed data) and the malformed. */
export function parseJobs<Q extends QueueName, J extends { id: string; data: unknown }>(
  queue: Q,
  jobs: J[],
): { valid: (Omit<J, 'data'> & { data: JobPayload<Q> })[]; malformed: Malformed<J>[] } {
  const valid: (Omit<J, 'data'> & { data: JobPayload<Q> })[] = [];
  const malformed: Malformed<J>[] = [];
  for (const job of jobs) {
    const parsed = parseJobPayload(queue, job.data);
    if (parsed.success) valid.push({ ...job, data: parsed.data });
    else malformed.push({ job, error: parsed.error });
  }
  return { valid, malformed };
}

export function logMalformed(log: Logger, queue: QueueName, malformed: Malformed<{ id: string }>[]): void {
  for (const { job, error } of malformed)
    log.error({ queue, job_id: job.id, error }, 'malformed job payload; failed without retry');
}

/**
 * Makes the next `fail` of these active jobs final: pg-boss retries a failed job while
 * retry_count < retry_limit, so the limit is brought down to the attempts made. Idempotent. The
 * worker's pg-boss uses the default `pgboss` schema (as server/services/recovery.ts reads it).
 */
export async function endRetries(boss: PgBoss, queue: QueueName, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await boss
    .getDb()
    .executeSql(`update pgboss.job set retry_limit = retry_count where name = $1 and id = any($2::uuid[]) and state = 'active'`, [
      queue,
      ids,
    ]);
}

/**
 * For handlers registered with pg-boss's own `work()`: fails the malformed jobs for good and
 * returns the others with their parsed data (pg-boss completes those when the handler returns;
 * a job failed here is no longer active, so that completion leaves it failed).
 */
export async function refuseMalformed<Q extends QueueName, J extends { id: string; data: unknown }>(
  boss: PgBoss,
  queue: Q,
  jobs: J[],
  log: Logger,
): Promise<(Omit<J, 'data'> & { data: JobPayload<Q> })[]> {
  const { valid, malformed } = parseJobs(queue, jobs);
  if (malformed.length) {
    logMalformed(log, queue, malformed);
    await endRetries(
      boss,
      queue,
      malformed.map((m) => m.job.id),
    );
    for (const { job, error } of malformed) await boss.fail(queue, job.id, { error });
  }
  return valid;
}
