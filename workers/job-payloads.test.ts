import { sql } from 'drizzle-orm';
import PgBoss from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { enqueue } from '@/server/jobs/enqueue';
import { QUEUES, type JobPayload, type QueueName } from '@/server/jobs/queues';
import type { Logger } from '@/server/logger';
import type { JobOutcome } from '@/server/jobs/outcomes';
import { startBatchLoop } from './batch-loop';
import { refuseMalformed } from './job-payloads';

/**
 * Workers parse each job's data with its queue's schema before handling it. A malformed payload
 * can never become valid, so it is failed at once, not retried: state `failed` after its first
 * attempt, with an error naming the queue and the zod issue, logged, and (for the send queues)
 * copied to the dead letter. The valid jobs of the same batch are handled as usual.
 */

type JobRow = { id: string; name: string; state: string; retry_count: number; output: { error?: string } | null; data: unknown };

async function job(id: string): Promise<JobRow | undefined> {
  const [row] = await db.execute<JobRow>(
    sql`select id, name, state::text as state, retry_count, output, data from pgboss.job where id = ${id}`,
  );
  return row;
}

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 10_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() - started > ms) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A logger that records error lines (the worker's logger is pino; only `error`/`warn` are used here). */
function recordingLogger() {
  const errors: { obj: Record<string, unknown>; msg: string }[] = [];
  const log = {
    error: (obj: Record<string, unknown>, msg: string) => errors.push({ obj, msg }),
    warn: () => {},
    info: () => {},
  } as unknown as Logger;
  return { log, errors };
}

let boss: PgBoss;

beforeAll(async () => {
  boss = new PgBoss({ connectionString: process.env.DATABASE_URL!, supervise: false, schedule: false, max: 2 });
  boss.on('error', () => {});
  await boss.start();
});

afterAll(async () => {
  await boss?.stop({ graceful: false, wait: true });
});

/** Sends a job through pg-boss's untyped API: the way a payload the types never saw reaches a queue. */
const sendRaw = async (queue: QueueName, data: object) => (await boss.send(queue, data))!;

describe('a worker refuses a malformed payload', () => {
  it('batch loop: the malformed job fails at once with the queue and the zod issue, logged; the valid one is handled with its parsed data', async () => {
    const { log, errors } = recordingLogger();
    const handled: JobPayload<typeof QUEUES.webhookRetry>[] = [];
    const bad = await sendRaw(QUEUES.webhookRetry, { eventId: 'seven' });
    const good = await sendRaw(QUEUES.webhookRetry, { eventId: 7, extra: 'dropped by the parse' });
    const loop = startBatchLoop(
      boss,
      QUEUES.webhookRetry,
      { batchSize: 10, loops: 1, idleMs: 50 },
      async (jobs) => {
        handled.push(...jobs.map((j) => j.data));
        return new Map<string, JobOutcome>(jobs.map((j) => [j.id, { ok: true }]));
      },
      log,
    );
    try {
      const failed = await until(
        () => job(bad),
        (j) => j?.state === 'failed',
      );
      // webhook.retry allows 8 retries: this one used none.
      expect(failed).toMatchObject({ state: 'failed', retry_count: 0 });
      expect(failed!.output?.error).toMatch(/^malformed webhook\.retry payload: eventId: .*expected number/i);
      expect(
        await until(
          () => job(good),
          (j) => j?.state === 'completed',
        ),
      ).toMatchObject({ state: 'completed' });
    } finally {
      await loop.stop();
    }
    expect(handled).toEqual([{ eventId: 7 }]);
    expect(errors).toEqual([
      {
        obj: { queue: 'webhook.retry', job_id: bad, error: expect.stringContaining('malformed webhook.retry payload: eventId') },
        msg: 'malformed job payload; failed without retry',
      },
    ]);
  });

  it('a malformed send job is not retried but moved to the dead letter, and the handler never sees it', async () => {
    const { log } = recordingLogger();
    let calls = 0;
    const bad = await sendRaw(QUEUES.smsSend, { message_id: 1, business_id: 1 });
    const loop = startBatchLoop(
      boss,
      QUEUES.smsSend,
      { batchSize: 10, loops: 1, idleMs: 50 },
      async () => {
        calls++;
        return new Map<string, JobOutcome>();
      },
      log,
    );
    try {
      expect(
        await until(
          () => job(bad),
          (j) => j?.state === 'failed',
        ),
      ).toMatchObject({ state: 'failed', retry_count: 0 });
    } finally {
      await loop.stop();
    }
    expect(calls).toBe(0);
    const [dead] = await db.execute<{ data: unknown; output: { error: string } }>(
      sql`select data, output from pgboss.job where name = ${QUEUES.smsSendDead} and data->>'message_id' = '1'`,
    );
    expect(dead).toMatchObject({
      data: { message_id: 1, business_id: 1 },
      output: { error: expect.stringContaining('messageId') },
    });
  });

  it('work() handlers: refuseMalformed fails the malformed jobs for good and returns the others, parsed', async () => {
    const { log, errors } = recordingLogger();
    const bad = await sendRaw(QUEUES.sandboxStatus, { provider: 'sandbox', providerMessageId: 'SM1', status: 'lost' });
    const good = await sendRaw(QUEUES.sandboxStatus, { provider: 'sandbox', providerMessageId: 'SM2', status: 'delivered' });
    const fetched = await boss.fetch<unknown>(QUEUES.sandboxStatus, { batchSize: 10 });
    expect(fetched.map((j) => j.id).sort()).toEqual([bad, good].sort());
    const valid = await refuseMalformed(boss, QUEUES.sandboxStatus, fetched, log);
    expect(valid.map((j) => [j.id, j.data])).toEqual([
      [good, { provider: 'sandbox', providerMessageId: 'SM2', status: 'delivered' }],
    ]);
    // What pg-boss's work() does once the handler returns: complete the batch. The refused job stays failed.
    await boss.complete(
      QUEUES.sandboxStatus,
      fetched.map((j) => j.id),
    );
    expect(await job(bad)).toMatchObject({
      state: 'failed',
      retry_count: 0,
      output: { error: expect.stringMatching(/^malformed sandbox\.status payload: status: /) },
    });
    expect(await job(good)).toMatchObject({ state: 'completed' });
    expect(errors.map((e) => e.obj.job_id)).toEqual([bad]);
  });

  it('a typed enqueue reaches the handler intact', async () => {
    const { log } = recordingLogger();
    const handled: JobPayload<typeof QUEUES.clientsImport>[] = [];
    const data: JobPayload<typeof QUEUES.clientsImport> = {
      businessId: 1,
      importId: 'c0ffee00-0000-4000-8000-000000000001',
      chunk: 3,
      clients: [
        { external_id: 'cl-1', name: 'Ada', phone_number: '+14155550100', client_type: 'vip', location_external_id: null },
      ],
    };
    await db.transaction((tx) => enqueue(tx, QUEUES.clientsImport, [{ data }]));
    const loop = startBatchLoop(
      boss,
      QUEUES.clientsImport,
      { batchSize: 1, loops: 1, idleMs: 50 },
      async (jobs) => {
        handled.push(...jobs.map((j) => j.data));
        return new Map<string, JobOutcome>();
      },
      log,
    );
    try {
      await until(
        async () => handled.length,
        (n) => n > 0,
      );
    } finally {
      await loop.stop();
    }
    expect(handled).toEqual([data]);
  });
});
