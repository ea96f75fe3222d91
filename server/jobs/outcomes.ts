import type PgBoss from 'pg-boss';

/**
 * What a handler decided for each job of a batch, for the worker's batch loop (workers/batch-loop.ts)
 * to complete or fail it. `retry: false` fails the job for good, whatever retries its queue allows.
 */
export type JobOutcome = { ok: true } | { ok: false; error: string; retry?: false };
export type BatchHandler<T> = (jobs: PgBoss.JobWithMetadata<T>[]) => Promise<Map<string, JobOutcome>>;
