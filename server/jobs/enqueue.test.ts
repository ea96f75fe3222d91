import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import PgBoss from 'pg-boss';
import { describe, expect, it } from 'vitest';
import { db, type Tx } from '@/server/db/client';
import { businesses } from '@/db/schema';
import { enqueue, executorFor } from '@/server/jobs/enqueue';
import {
  createQueues,
  parseJobPayload,
  QUEUE_OPTIONS,
  QUEUES,
  type JobPayload,
  type QueueName,
  type SandboxStatusJob,
  type SendJob,
} from '@/server/jobs/queues';
import { createBusiness } from '@/server/testing/factories';

/**
 * docs/architecture.md#enqueueing-in-the-callers-transaction: jobs are enqueued through the caller's transaction, so a job exists exactly
 * when the rows it refers to do. `enqueue` drives pg-boss 10's own insert SQL through drizzle.
 */

type JobRow = {
  id: string;
  name: string;
  data: unknown;
  data_type: string;
  state: string;
  priority: number;
  retry_limit: number;
  retry_count: number;
  retry_delay: number;
  retry_backoff: boolean;
  expire_seconds: number;
  dead_letter: string | null;
  policy: string | null;
  singleton_key: string | null;
  start_in_seconds: number;
  created_on: Date;
};

/** Jobs whose payload carries this marker, read from any connection (`tx` defaults to the pool). */
async function jobsWithMarker(marker: string, tx: Tx = db): Promise<JobRow[]> {
  const rows = await tx.execute<JobRow>(sql`
    select id, name, data, jsonb_typeof(data) as data_type, state::text as state, priority, retry_limit, retry_count,
           retry_delay, retry_backoff, extract(epoch from expire_in)::int as expire_seconds, dead_letter, policy,
           singleton_key, extract(epoch from (start_after - now()))::float8 as start_in_seconds, created_on
    from pgboss.job where data->>'marker' = ${marker} order by created_on, id`);
  return [...rows];
}

const marker = () => `m-${randomUUID()}`;

/**
 * A valid payload plus the keys these tests find their jobs by. Extra keys are no type error for a
 * value that is not a fresh object literal, and the worker's parse drops them.
 */
const tagged = <T extends object>(data: T, tags: object): T => ({ ...data, ...tags });

/** One valid payload per queue: a queue added to the registry needs one here (a type error until then). */
const SAMPLES: { [Q in QueueName]: JobPayload<Q> } = {
  'sms.send.dead': { messageId: 1, businessId: 1 },
  'email.send.dead': { messageId: 1, businessId: 1 },
  'sms.send': { messageId: 1, businessId: 1 },
  'email.send': { messageId: 1, businessId: 1 },
  'sms.send.bulk': { messageIds: [1, 2], attempts: [1, 2], businessId: 1 },
  'email.send.bulk': { messageIds: [1, 2], attempts: [1, 1], businessId: 1 },
  'sms.send.later': { messageId: 1, businessId: 1 },
  'email.send.later': { messageId: 1, businessId: 1 },
  'sandbox.status': { provider: 'sandbox', providerMessageId: 'SM123', status: 'delivered' },
  'webhook.retry': { eventId: 1 },
  'clients.import': {
    businessId: 1,
    importId: 'c0ffee00-0000-4000-8000-000000000000',
    chunk: 0,
    clients: [{ external_id: 'cl-1', name: 'Ada', email: null, client_type: 'vip' }],
  },
  'assignment.sweep': { businessId: 1 },
  'system.maintenance': {},
};

describe('enqueue(tx, queue, jobs)', () => {
  it('commits jobs with the transaction, with the retry policy of their queue (as stored in pgboss.queue)', async () => {
    const m = marker();
    await db.transaction(async (tx) => {
      await enqueue(tx, QUEUES.smsSend, [
        { data: tagged({ messageId: 1, businessId: 1 }, { marker: m }) },
        { data: tagged({ messageId: 2, businessId: 1 }, { marker: m }) },
      ]);
    });
    const jobs = await jobsWithMarker(m);
    expect(jobs).toHaveLength(2);
    const [queue] = [
      ...(await db.execute<{
        retry_limit: number;
        retry_delay: number;
        retry_backoff: boolean;
        expire_seconds: number;
        dead_letter: string | null;
        policy: string | null;
      }>(
        sql`select retry_limit, retry_delay, retry_backoff, expire_seconds, dead_letter, policy from pgboss.queue where name = ${QUEUES.smsSend}`,
      )),
    ];
    expect(queue).toBeDefined();
    for (const job of jobs) {
      expect(job).toMatchObject({
        name: 'sms.send',
        state: 'created',
        priority: 0,
        retry_count: 0,
        retry_limit: queue!.retry_limit,
        retry_delay: queue!.retry_delay,
        retry_backoff: queue!.retry_backoff,
        expire_seconds: queue!.expire_seconds,
        dead_letter: queue!.dead_letter,
        policy: queue!.policy,
      });
      // And that stored policy is the one the code declares.
      expect(job).toMatchObject({
        retry_limit: 5,
        retry_delay: 2,
        retry_backoff: true,
        expire_seconds: 60,
        dead_letter: 'sms.send.dead',
      });
      expect(Math.abs(job.start_in_seconds)).toBeLessThan(5);
    }
    expect(jobs.map((j) => (j.data as { messageId: number }).messageId).sort()).toEqual([1, 2]);
  });

  it.each(Object.entries(QUEUE_OPTIONS) as [QueueName, (typeof QUEUE_OPTIONS)[QueueName]][])(
    'queue %s: a job gets that queue’s declared policy',
    async (name, options) => {
      const m = marker();
      await db.transaction((tx) => enqueue(tx, name, [{ data: tagged(SAMPLES[name], { marker: m }) }]));
      const [job] = await jobsWithMarker(m);
      expect(job).toBeDefined();
      expect(job!.name).toBe(name);
      expect(job!.retry_limit).toBe(options.retryLimit ?? 2);
      if (options.retryDelay !== undefined) expect(job!.retry_delay).toBe(options.retryDelay);
      expect(job!.retry_backoff).toBe(options.retryBackoff ?? false);
      if (options.expireInSeconds !== undefined) expect(job!.expire_seconds).toBe(options.expireInSeconds);
      expect(job!.dead_letter).toBe(options.deadLetter ?? null);
      expect(job!.policy).toBe(options.policy ?? 'standard');
    },
  );

  it('a job is visible inside its transaction and invisible to everyone else until commit', async () => {
    const m = marker();
    await db.transaction(async (tx) => {
      await enqueue(tx, QUEUES.emailSend, [{ data: tagged(SAMPLES['email.send'], { marker: m }) }]);
      expect(await jobsWithMarker(m, tx)).toHaveLength(1);
      expect(await jobsWithMarker(m)).toHaveLength(0);
    });
    expect(await jobsWithMarker(m)).toHaveLength(1);
  });

  it('a transaction that throws after enqueueing leaves no job and none of its rows behind', async () => {
    const m = marker();
    let businessId: number | undefined;
    await expect(
      db.transaction(async (tx) => {
        const b = await createBusiness({ name: `Rolled back ${m}` }, tx);
        businessId = b.id;
        await enqueue(tx, QUEUES.smsSend, [{ data: tagged({ businessId: b.id, messageId: 1 }, { marker: m }) }]);
        await enqueue(tx, QUEUES.emailSend, [{ data: tagged({ businessId: b.id, messageId: 2 }, { marker: m }) }]);
        expect(await jobsWithMarker(m, tx)).toHaveLength(2);
        throw new Error('provider exploded after enqueue');
      }),
    ).rejects.toThrow('provider exploded after enqueue');
    expect(businessId).toEqual(expect.any(Number));
    expect(await jobsWithMarker(m)).toEqual([]);
    expect(await db.select().from(businesses).where(eq(businesses.id, businessId!))).toEqual([]);
  });

  it('a rolled-back savepoint drops its jobs while the outer transaction keeps its own', async () => {
    const outer = marker();
    const inner = marker();
    await db.transaction(async (tx) => {
      await enqueue(tx, QUEUES.smsSend, [{ data: tagged(SAMPLES['sms.send'], { marker: outer }) }]);
      await tx
        .transaction(async (sp) => {
          await enqueue(sp, QUEUES.smsSend, [{ data: tagged(SAMPLES['sms.send'], { marker: inner }) }]);
          throw new Error('inner');
        })
        .catch(() => {});
    });
    expect(await jobsWithMarker(outer)).toHaveLength(1);
    expect(await jobsWithMarker(inner)).toHaveLength(0);
  });

  it('jobs with undefined options work; startAfterSeconds delays the job and singletonKey is stored', async () => {
    const m = marker();
    const status: SandboxStatusJob = SAMPLES['sandbox.status'];
    await db.transaction(async (tx) => {
      await enqueue(tx, QUEUES.sandboxStatus, [
        { data: tagged(status, { marker: m, n: 1 }), startAfterSeconds: undefined, singletonKey: undefined },
        { data: tagged(status, { marker: m, n: 2 }), startAfterSeconds: 120 },
        { data: tagged(status, { marker: m, n: 3 }), singletonKey: 'status-SM123' },
        { data: tagged(status, { marker: m, n: 4 }), startAfterSeconds: 0 },
      ]);
    });
    const jobs = new Map((await jobsWithMarker(m)).map((j) => [(j.data as { n: number }).n, j]));
    expect(jobs.size).toBe(4);
    expect(Math.abs(jobs.get(1)!.start_in_seconds)).toBeLessThan(5);
    expect(jobs.get(1)!.singleton_key).toBeNull();
    expect(jobs.get(2)!.start_in_seconds).toBeGreaterThan(110);
    expect(jobs.get(2)!.start_in_seconds).toBeLessThan(125);
    expect(jobs.get(3)!.singleton_key).toBe('status-SM123');
    expect(Math.abs(jobs.get(4)!.start_in_seconds)).toBeLessThan(5);
  });

  it('the executor binds pg-boss parameters: undefined becomes NULL, $10 is not $1 followed by 0', async () => {
    await db.transaction(async (tx) => {
      const ex = executorFor(tx);
      const { rows } = await ex.executeSql('select $1::int as a, $2::text as b, $10::int + $1::int as c', [
        undefined,
        'x',
        3,
        4,
        5,
        6,
        7,
        8,
        9,
        10,
      ]);
      expect(rows).toEqual([{ a: null, b: 'x', c: null }]);
      const second = await ex.executeSql('select $1::int + $10::int as c', [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(second.rows).toEqual([{ c: 11 }]);
    });
  });

  it('an empty job list is a no-op', async () => {
    await db.transaction(async (tx) => {
      await expect(enqueue(tx, QUEUES.smsSend, [])).resolves.toBeUndefined();
    });
  });

  it('JSON data round-trips exactly: nested objects, arrays, unicode, quotes, backslashes and $n text, stored as a jsonb object', async () => {
    const m = marker();
    const data = {
      marker: m,
      messageId: 9_007_199_254_740_991,
      businessId: -1,
      ratio: 0.125,
      ok: true,
      nothing: null,
      empty: { list: [], obj: {} },
      nested: { a: [1, { b: [{ c: 'deep' }] }], 'clé ünïcode': 'value' },
      text: {
        emoji: 'Hi 👋🏽 — see you 🌸',
        cjk: '予約を確認しました',
        rtl: 'مرحبا',
        combining: 'e\u0301',
        quotes: `O'Brien said "hi"`,
        backslash: 'C:\\path\\to\\file \\n not a newline',
        newline: 'line1\nline2\ttab',
        dollars: 'costs $1 and $10, ${x}',
        sqlish: "'); drop table pgboss.job; --",
      },
    };
    await db.transaction((tx) => enqueue(tx, QUEUES.emailSend, [{ data }]));
    const [job] = await jobsWithMarker(m);
    expect(job!.data_type).toBe('object');
    expect(job!.data).toEqual(data);
    // Read as text too: no double encoding (a JSON string containing JSON).
    const [raw] = [
      ...(await db.execute<{ t: string }>(sql`select data->'text'->>'emoji' as t from pgboss.job where id = ${job!.id}`)),
    ];
    expect(raw!.t).toBe(data.text.emoji);
  });

  it('many jobs in one call: one row each, in the named queue', async () => {
    const m = marker();
    await db.transaction((tx) =>
      enqueue(
        tx,
        QUEUES.smsSend,
        Array.from({ length: 250 }, (_, i) => ({ data: tagged({ messageId: i + 1, businessId: 1 }, { marker: m }) })),
      ),
    );
    const jobs = await jobsWithMarker(m);
    expect(jobs).toHaveLength(250);
    expect(new Set(jobs.map((j) => (j.data as { messageId: number }).messageId)).size).toBe(250);
    expect(new Set(jobs.map((j) => j.name))).toEqual(new Set(['sms.send']));
  });
});

describe('the job registry: one schema per queue, typed at enqueue, parsed at the worker', () => {
  it('a typed enqueue round-trips: what is stored parses back to the payload, for every queue', async () => {
    const m = marker();
    const names = Object.keys(SAMPLES) as QueueName[];
    await db.transaction(async (tx) => {
      // A key of its own: a `short` queue keeps one waiting job per key, and the test above left one without.
      for (const name of names) await enqueue(tx, name, [{ data: tagged(SAMPLES[name], { marker: m }), singletonKey: m }]);
    });
    const jobs = await jobsWithMarker(m);
    expect(jobs.map((j) => j.name).sort()).toEqual([...names].sort());
    for (const job of jobs) {
      const name = job.name as QueueName;
      // The worker's parse drops the test's marker and gives back exactly the payload enqueued.
      expect(parseJobPayload(name, job.data)).toEqual({ success: true, data: SAMPLES[name] });
    }
  });

  it('a send job keeps its ids exactly (bigint-sized message ids included)', async () => {
    const m = marker();
    const data: SendJob = { messageId: 9_007_199_254_740_991, businessId: 42 };
    await db.transaction((tx) => enqueue(tx, QUEUES.smsSend, [{ data: tagged(data, { marker: m }) }]));
    const [job] = await jobsWithMarker(m);
    expect(parseJobPayload(QUEUES.smsSend, job!.data)).toEqual({ success: true, data });
  });

  it('a wrong payload is a compile error (checked by tsc, never run)', () => {
    const wrong = (tx: Tx) => [
      // @ts-expect-error messageId is a number
      enqueue(tx, QUEUES.smsSend, [{ data: { messageId: '1', businessId: 1 } }]),
      // @ts-expect-error businessId is missing
      enqueue(tx, QUEUES.emailSend, [{ data: { messageId: 1 } }]),
      // @ts-expect-error a webhook retry payload is not a send payload
      enqueue(tx, QUEUES.smsSend, [{ data: { eventId: 1 } }]),
      // @ts-expect-error payload fields are camelCase
      enqueue(tx, QUEUES.clientsImport, [{ data: { business_id: 1, import_id: 'x', chunk: 0, clients: [] } }]),
      // @ts-expect-error not a status
      enqueue(tx, QUEUES.sandboxStatus, [{ data: { provider: 'sandbox', providerMessageId: 'SM1', status: 'lost' } }]),
      // @ts-expect-error not a queue
      enqueue(tx, 'sms.sned', [{ data: { messageId: 1, businessId: 1 } }]),
    ];
    expect(wrong).toBeTypeOf('function');
  });

  it('a malformed payload is refused with an error naming the queue, the field and the issue', () => {
    const bad = parseJobPayload(QUEUES.smsSend, { messageId: 'abc', businessId: 1 });
    expect(bad.success).toBe(false);
    expect(!bad.success && bad.error).toMatch(/^malformed sms\.send payload: messageId: .*expected number/i);
    const none = parseJobPayload(QUEUES.webhookRetry, null);
    expect(!none.success && none.error).toMatch(/^malformed webhook\.retry payload: \(payload\): /);
    const rows = parseJobPayload(QUEUES.clientsImport, {
      ...SAMPLES['clients.import'],
      clients: Array.from({ length: 5 }, () => ({ name: 'no external id' })),
    });
    expect(!rows.success && rows.error).toMatch(/clients\.0\.external_id: .*; clients\.1\.external_id: .*\(and 2 more issues\)$/);
  });

  it('a clients.import job enqueued before payloads were camelCase is still read', () => {
    const { businessId, importId, chunk, clients } = SAMPLES['clients.import'];
    const legacy = { business_id: businessId, import_id: importId, chunk, clients };
    expect(parseJobPayload(QUEUES.clientsImport, legacy)).toEqual({ success: true, data: SAMPLES['clients.import'] });
  });

  it('the maintenance cron job carries null: read as an empty payload', () => {
    expect(parseJobPayload(QUEUES.maintenance, null)).toEqual({ success: true, data: {} });
  });

  it('a dead-letter queue is defined (so created) before the queues that name it', async () => {
    const order = Object.keys(QUEUE_OPTIONS);
    for (const [name, options] of Object.entries(QUEUE_OPTIONS)) {
      if (options.deadLetter) expect(order.indexOf(options.deadLetter)).toBeLessThan(order.indexOf(name));
    }
    expect(QUEUE_OPTIONS[QUEUES.smsSend].deadLetter).toBe(QUEUES.smsSendDead);
    expect(QUEUE_OPTIONS[QUEUES.emailSend].deadLetter).toBe(QUEUES.emailSendDead);
    // And createQueues, run again on the migrated database, brings every queue to its policy.
    const boss = new PgBoss({ connectionString: process.env.DATABASE_URL!, supervise: false, schedule: false, max: 1 });
    boss.on('error', () => {});
    await boss.start();
    try {
      await createQueues(boss);
      const stored = new Map((await boss.getQueues()).map((q) => [q.name, q]));
      for (const [name, options] of Object.entries(QUEUE_OPTIONS)) {
        expect(stored.get(name)).toMatchObject({ name, deadLetter: options.deadLetter ?? null });
      }
    } finally {
      await boss.stop({ graceful: false, wait: true });
    }
  });
});
