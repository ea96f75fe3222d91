import { sql, type SQL } from 'drizzle-orm';
import PgBoss from 'pg-boss';
import type { Tx } from '@/server/db/client';
import type { JobPayload, QueueName } from './queues';

/**
 * Enqueues pg-boss jobs through the caller's drizzle transaction, so a job exists exactly when the
 * rows it refers to do: commit both or neither. pg-boss is never started in web processes; only
 * its SQL builder is used, through a `db` executor bound to the transaction.
 */
let builder: PgBoss | undefined;
function boss(): PgBoss {
  // The connection string is never used: every call below passes its own executor.
  builder ??= new PgBoss({ connectionString: 'postgres://unused', supervise: false, schedule: false });
  return builder;
}

/** pg-boss SQL text with $1…$n → a drizzle query with bound parameters. */
function bind(text: string, values: unknown[]): SQL {
  const parts = text.split(/\$(\d+)/);
  const chunks: SQL[] = [];
  parts.forEach((part, i) => {
    if (i % 2 === 0) chunks.push(sql.raw(part));
    // pg-boss passes undefined for unset options; postgres.js refuses undefined.
    else chunks.push(sql`${values[Number(part) - 1] ?? null}`);
  });
  return sql.join(chunks, sql.raw(''));
}

export function executorFor(tx: Tx): PgBoss.Db {
  return {
    async executeSql(text: string, values: unknown[] = []) {
      const rows = await tx.execute(bind(text, values));
      return { rows: [...rows] };
    },
  };
}

export type JobInput<T> = {
  data: T;
  /** Seconds to wait before the job may run. */
  startAfterSeconds?: number;
  /** The moment the job may run (send later); takes precedence over startAfterSeconds. */
  startAt?: Date;
  singletonKey?: string;
};

/**
 * One statement for any number of jobs (pg-boss `insert`), inside `tx`. The payload type is the
 * queue's (server/jobs/queues.ts), checked at compile time only: nothing is parsed here, so a bulk
 * enqueue costs no validation; the worker parses each job's data with the same schema.
 */
export async function enqueue<Q extends QueueName>(tx: Tx, queue: Q, jobs: JobInput<NoInfer<JobPayload<Q>>>[]): Promise<void> {
  if (jobs.length === 0) return;
  await boss().insert(
    jobs.map((j) => ({
      name: queue,
      data: j.data,
      startAfter: j.startAt ?? (j.startAfterSeconds ? new Date(Date.now() + j.startAfterSeconds * 1000) : undefined),
      singletonKey: j.singletonKey,
    })),
    { db: executorFor(tx) },
  );
}
