import PgBoss from 'pg-boss';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql } from '@/db/connect';
import { closeDb, db } from '@/server/db/client';
import { env } from '@/server/env';
import { followBusiness } from '@/server/testing/business-events';
import { createClient, createConversation, createMessage, createSmsNumber } from '@/server/testing/factories';
import { getJson, postJson, restTenant, type RestTenant } from '@/server/testing/http';
import { startPgBouncer, type PgBouncer } from '@/server/testing/pgbouncer';
import { toolForTestFile } from '@/deploy/system-tools';

/**
 * The product behind PgBouncer 1.18 in transaction pooling mode (docs/production.md):
 * DATABASE_URL points at PgBouncer (pool_size 2 here), DATABASE_PREPARE=false, and
 * DATABASE_LISTEN_URL is a direct connection for LISTEN. The last two tests show, with raw
 * postgres.js clients, what its default named statements do behind such a pooler. Needs the
 * `pgbouncer` binary (`apt-get install -y pgbouncer`); skipped, saying so, without it.
 */
const binary = toolForTestFile('pgbouncer', 'server/db/pgbouncer.test.ts');
const POOL_SIZE = 2;

/** `promise`, or a rejection naming `what` after `ms` (the timer is cleared either way). */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(!binary)(
  `behind PgBouncer, transaction pooling, pool_size ${POOL_SIZE}${binary ? '' : ' (skipped: pgbouncer is not installed)'}`,
  () => {
    let bouncer: PgBouncer;
    let direct: string;
    let database: string;
    let t: RestTenant;

    beforeAll(async () => {
      direct = process.env.DATABASE_URL!; // this file's private database (server/testing/setup-database.ts)
      database = new URL(direct).pathname.slice(1);
      bouncer = await startPgBouncer({ binary: binary!, serverUrl: direct, poolSize: POOL_SIZE });
      // The documented settings, before anything reads the configuration.
      process.env.DATABASE_URL = bouncer.url(database);
      process.env.DATABASE_PREPARE = 'false';
      process.env.DATABASE_LISTEN_URL = direct;
      expect(env()).toMatchObject({ databaseUrl: bouncer.url(database), databasePrepare: false, databaseListenUrl: direct });
      t = await restTenant();
    });

    afterAll(async () => {
      await closeDb();
      await bouncer?.stop();
    });

    /** The backend pids of PgBouncer's server connections to this file's database (its admin console). */
    async function serverPids(): Promise<number[]> {
      const admin = createSql(bouncer.adminUrl, { max: 1, fetch_types: false });
      try {
        const rows = await admin.unsafe('SHOW SERVERS').simple();
        return rows.filter((r) => r.database === database).map((r) => Number(r.remote_pid));
      } finally {
        await admin.end({ timeout: 1 });
      }
    }

    it('REST calls on the prepared hot paths, 120 at once, all answer through 2 server connections', async () => {
      await createSmsNumber(t.business.id);
      const convs = [];
      for (let i = 0; i < 4; i++) {
        const client = await createClient(t.business.id);
        const conv = await createConversation(t.business.id, client.id);
        for (let j = 0; j < 3; j++) await createMessage(conv);
        convs.push(conv);
      }
      const calls: Array<() => Promise<{ status: number; body: unknown }>> = [];
      for (let i = 0; i < 20; i++) {
        const conv = convs[i % convs.length]!;
        calls.push(
          // executePrepared: the list, the counts, client details
          () => getJson(`${t.base}/conversations?page_size=10`, t.key),
          () => getJson(`${t.base}/conversations/filters`, t.key),
          () => getJson(`${t.base}/clients/${conv.clientId}`, t.key),
          // drizzle .prepare('load_conversation' / 'conversation_messages_page' / '…_count')
          () => getJson(`${t.base}/conversations/${conv.id}/messages?page_size=5`, t.key),
          // a transaction: the message, the conversation's counters, NOTIFY
          () => postJson(`${t.base}/conversations/${conv.id}/notes`, t.key, { content: `note ${i}` }),
          // a transaction: messages, leads, pg-boss jobs through the transaction, NOTIFY
          () =>
            postJson(`${t.base}/sms`, t.key, {
              sender_type: 'system',
              messages: [{ to_number: `+1415555${String(1000 + i)}`, message: `hello ${i}` }],
            }),
        );
      }
      const answers = await Promise.all(calls.map((c) => c()));
      const failed = answers.filter((a) => a.status !== 200);
      expect(failed).toEqual([]);

      // Nothing was prepared by name on the server connections, and there were at most 2 of them.
      for (let i = 0; i < 4; i++) {
        const [row] = await db.execute<{ n: number }>(sql`select count(*)::int as n from pg_prepared_statements`);
        expect(row!.n).toBe(0);
      }
      const servers = await serverPids();
      expect(servers.length).toBeGreaterThan(0);
      expect(servers.length).toBeLessThanOrEqual(POOL_SIZE);
      const [jobs] = await db.execute<{ n: number }>(sql`select count(*)::int as n from pgboss.job where name = 'sms.send'`);
      expect(jobs!.n).toBe(20);
    });

    it('a NOTIFY sent through PgBouncer (in the writer’s transaction) reaches the LISTEN on DATABASE_LISTEN_URL', async () => {
      const client = await createClient(t.business.id);
      const conv = await createConversation(t.business.id, client.id);
      const events = followBusiness(t.business.id, 1); // the meter counts by id only
      const first = events.next(10_000); // waits for the LISTEN to be in place, then the event
      // The LISTEN runs on a backend of its own, none of PgBouncer's server connections.
      const check = createSql(direct, { max: 1 });
      try {
        for (let i = 0; ; i++) {
          const rows = await check`select pid from pg_stat_activity where datname = ${database} and query ilike 'listen%'`;
          if (rows.length > 0) {
            const pooled = await serverPids();
            expect(rows.map((r) => r.pid as number).filter((pid) => !pooled.includes(pid))).toHaveLength(1);
            break;
          }
          if (i > 100) throw new Error('no LISTEN connection on the direct URL');
          await new Promise((r) => setTimeout(r, 50));
        }
      } finally {
        await check.end({ timeout: 1 });
      }
      const note = await postJson(`${t.base}/conversations/${conv.id}/notes`, t.key, { content: 'through the pooler' });
      expect(note.status).toBe(200);
      const event = await within(first, 5000, 'no event');
      expect(event).toMatchObject({ type: 'message.created', businessId: t.business.id, conversationIds: [conv.id] });
      events.stop();
    });

    it('pg-boss 10 works through it: start, send, fetch, complete, and its advisory-locked maintenance', async () => {
      const boss = new PgBoss({
        connectionString: bouncer.url(database),
        max: 2,
        supervise: true,
        schedule: false,
        maintenanceIntervalSeconds: 1,
      });
      const errors: Error[] = [];
      boss.on('error', (err) => errors.push(err));
      const maintained = new Promise((resolve) => boss.once('maintenance', resolve));
      await boss.start();
      try {
        // Jobs enqueued by the web side inside its transactions (the test above) are fetched here.
        await postJson(`${t.base}/sms`, t.key, {
          sender_type: 'system',
          messages: [{ to_number: '+14155552000', message: 'queued' }],
        });
        const fetched = await boss.fetch<{ messageId: number }>('sms.send', { batchSize: 100 });
        expect(fetched.length).toBeGreaterThan(0);
        await boss.complete(
          'sms.send',
          fetched.map((j) => j.id),
        );
        await boss.createQueue('pgbouncer.check');
        const id = await boss.send('pgbouncer.check', { hello: 'pooler' });
        const [job] = await boss.fetch<{ hello: string }>('pgbouncer.check');
        expect(job).toMatchObject({ id, data: { hello: 'pooler' } });
        await boss.complete('pgbouncer.check', job!.id);
        expect((await boss.getJobById('pgbouncer.check', id!))?.state).toBe('completed');
        // Maintenance runs BEGIN; SET LOCAL …; pg_advisory_xact_lock(…); …; COMMIT as one message.
        await within(maintained, 10_000, 'no maintenance');
        expect(errors).toEqual([]);
      } finally {
        await boss.stop({ graceful: false, wait: true });
      }
    });

    it('without DATABASE_PREPARE=false: a statement prepared on one server connection is missing inside a transaction on the other', async () => {
      const url = bouncer.url(database);
      const holder = createSql(url, { max: 1, prepare: false });
      // postgres.js defaults: every statement is prepared by name on whichever server connection runs it.
      const prepared = createSql(url, { max: 1 });
      const unnamed = createSql(url, { max: 1, prepare: false });
      try {
        for (const [client, expectFailure] of [
          [prepared, true],
          [unnamed, false],
        ] as const) {
          // 1. Runs (and, by default, prepares) the statement on server connection A.
          const [a] = await client`select pg_backend_pid() as pid, ${1}::int as n`;
          // 2. Another client takes A for a transaction (PgBouncer hands out the idle connection it
          //    just got back), so the next transaction gets server connection B.
          await holder.begin(async (h) => {
            const [held] = await h`select pg_backend_pid() as pid`;
            expect(held!.pid).toBe(a!.pid);
            const attempt = client.begin(async (tx) => {
              const [b] = await tx`select pg_backend_pid() as pid, ${2}::int as n`;
              return b!;
            });
            if (expectFailure) {
              // postgres.js re-prepares after this error outside a transaction; inside one it cannot.
              await expect(attempt).rejects.toMatchObject({
                code: '26000',
                message: expect.stringMatching(/prepared statement ".+" does not exist/),
              });
            } else {
              const b = await attempt;
              expect(b).toMatchObject({ n: 2 });
              expect(b.pid).not.toBe(a!.pid);
            }
          });
        }
      } finally {
        await Promise.all([holder.end({ timeout: 1 }), prepared.end({ timeout: 1 }), unnamed.end({ timeout: 1 })]);
      }
    });

    it('without DATABASE_PREPARE=false: a transaction can answer committed and be rolled back', async () => {
      const url = bouncer.url(database);
      await db.execute(sql`create table if not exists pgbouncer_check (client text not null)`);
      const holder = createSql(url, { max: 1, prepare: false });
      const prepared = createSql(url, { max: 1 });
      const unnamed = createSql(url, { max: 1, prepare: false });
      try {
        for (const [client, name] of [
          [prepared, 'prepared'],
          [unnamed, 'unnamed'],
        ] as const) {
          // `begin`, the statement and `commit` run on server connection A (prepared there by default).
          await client.begin(async (tx) => tx`select 1`);
          await holder.begin(async () => {
            // A is held, so this transaction runs on B: its `commit` names a statement B has never
            // seen (26000); postgres.js prepares it again and runs COMMIT in the now aborted
            // transaction, which PostgreSQL answers with ROLLBACK, and begin() resolves.
            const answer = await client.begin(async (tx) => {
              await tx`insert into pgbouncer_check (client) values (${name})`;
              return 'committed';
            });
            expect(answer).toBe('committed');
          });
        }
        const rows = await db.execute<{ client: string }>(sql`select client from pgbouncer_check order by client`);
        expect(rows.map((r) => r.client)).toEqual(['unnamed']); // the `prepared` row was lost
      } finally {
        await Promise.all([holder.end({ timeout: 1 }), prepared.end({ timeout: 1 }), unnamed.end({ timeout: 1 })]);
      }
    });
  },
);
