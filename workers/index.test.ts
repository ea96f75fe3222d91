import { readdirSync } from 'node:fs';
import os from 'node:os';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { idempotencyKeys, rateLimitBuckets, sessions } from '@/db/schema';
import { QUEUE_OPTIONS } from '@/server/jobs/queues';
import { sweepExpiredRows } from '@/server/services/maintenance';
import { insertMessages } from '@/server/services/messages/insert';
import { createClient, createConversation, createTenant } from '@/server/testing/factories';
import { pendingSearchPages } from '@/server/testing/search-index';
import { startWorkerProcess } from '@/server/testing/worker-process';

describe('worker process', () => {
  it('starts pg-boss, creates every known queue, and drains and exits 0 on SIGTERM', async () => {
    // A process group of its own: a failed assertion below kills the worker too (finally), never
    // leaving it running after the test.
    const worker = await startWorkerProcess({ WORKER_NICE: '7' }, { readyTimeoutMs: 20_000 });
    try {
      const out = () => worker.output();
      // The worker process (the one that logged, not the tsx wrapper) yields the CPU: nice 7, as asked.
      const startedLine = JSON.parse(
        out()
          .split('\n')
          .find((l) => l.includes('"worker started"'))!,
      ) as { pid: number };
      expect(os.getPriority(startedLine.pid)).toBe(7);
      // Every thread of it (Linux keeps nice per thread: V8's helper threads started before main()),
      // but the event log's, which keeps the web processes' priority (WORKER_EVENTS_NICE, 0).
      if (process.platform === 'linux') {
        for (let t = Date.now(); !out().includes('"event log thread started"') && Date.now() - t < 20_000;)
          await new Promise((r) => setTimeout(r, 50));
        const eventsLine = JSON.parse(
          out()
            .split('\n')
            .find((l) => l.includes('"event log thread started"'))!,
        ) as { tid: number };
        const threads = readdirSync(`/proc/${startedLine.pid}/task`).map(Number);
        expect(threads.length).toBeGreaterThan(2);
        expect(threads).toContain(eventsLine.tid);
        expect(threads.map((t) => [t, os.getPriority(t)])).toEqual(threads.map((t) => [t, t === eventsLine.tid ? 0 : 7]));
      }
      const queues = await db.execute<{ name: string }>(sql`select name from pgboss.queue order by name`);
      expect(queues.map((q) => q.name)).toEqual(expect.arrayContaining(Object.keys(QUEUE_OPTIONS)));
      const dead = await db.execute<{ dead_letter: string | null }>(
        sql`select dead_letter from pgboss.queue where name = 'sms.send'`,
      );
      expect(dead[0]!.dead_letter).toBe('sms.send.dead');

      // docs/architecture.md#search-texts: the worker merges the search indexes' pending lists (every
      // second), so a bulk insert does not. Autovacuum, which would too, is off for the check.
      await db.execute(sql`alter table message_search set (autovacuum_enabled = false)`);
      const t = await createTenant();
      const conversation = await createConversation(t.business.id, (await createClient(t.business.id)).id);
      await insertMessages(
        Array.from({ length: 100 }, (_, i) => ({
          businessId: t.business.id,
          conversationId: conversation.id,
          clientId: conversation.clientId,
          channel: 'sms' as const,
          direction: 'outbound' as const,
          messageType: 'TEXT' as const,
          senderType: 'system' as const,
          content: `Waiting for the worker's merge, number ${i}`,
          status: 'sent' as const,
          origin: 'send' as const,
        })),
        db,
      );
      const merged = Date.now();
      let pending = await pendingSearchPages();
      while (pending > 0 && Date.now() - merged < 10_000) {
        await new Promise((r) => setTimeout(r, 200));
        pending = await pendingSearchPages();
      }
      expect(pending).toBe(0);
      await db.execute(sql`alter table message_search reset (autovacuum_enabled)`);

      worker.kill('SIGTERM', 'leader');
      expect((await worker.exited).code).toBe(0);
      expect(out()).toContain('worker stopped');
    } finally {
      if (worker.alive()) await worker.stop(2_000, 'SIGKILL');
    }
  });
});

describe('maintenance sweep', () => {
  it('deletes expired idempotency keys, stale rate-limit windows and long-ended sessions, and nothing live', async () => {
    const { business, owner } = await createTenant();
    await db.insert(idempotencyKeys).values([
      { callerScope: 's', path: '/a', key: 'old', requestHash: 'h', expiresAt: sql`now() - interval '1 minute'` },
      { callerScope: 's', path: '/a', key: 'new', requestHash: 'h', expiresAt: sql`now() + interval '1 hour'` },
    ]);
    await db.insert(rateLimitBuckets).values([
      { callerScope: 'k', windowStart: sql`date_trunc('minute', now()) - interval '10 minutes'`, count: 3 },
      { callerScope: 'k', windowStart: sql`date_trunc('minute', now())`, count: 3 },
    ]);
    await db.insert(sessions).values({
      businessId: business.id,
      staffId: owner.id,
      tokenHash: 'ended-long-ago',
      ttlSeconds: 60,
      expiresAt: sql`now() - interval '8 days'`,
    });
    const swept = await sweepExpiredRows();
    expect(swept).toEqual({ idempotencyKeys: 1, rateLimitBuckets: 1, sessions: 1 });
    expect(await db.select().from(idempotencyKeys)).toHaveLength(1);
    expect(await db.select().from(rateLimitBuckets)).toHaveLength(1);
    expect(await db.select().from(sessions).where(eq(sessions.businessId, business.id))).toHaveLength(1); // the tenant's live session
  });
});
