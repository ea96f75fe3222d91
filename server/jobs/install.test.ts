import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { fetchIndexName } from './install';
import { QUEUES } from './queues';

/**
 * docs/architecture.md#pg-boss-fetch-index: the fetch index in pg-boss's order on each queue's
 * partition, but not on the send-later queues', whose fetch pg-boss's (name, start_after) index
 * serves (with ours the planner walked every job waiting for later: bench:appointments).
 */
async function indexesOf(queue: string): Promise<string[]> {
  const rows = await db.execute<{ index: string }>(sql`
    select i.indexname as index from pgboss.queue q join pg_indexes i on i.schemaname = 'pgboss' and i.tablename = q.partition_name
    where q.name = ${queue}`);
  return rows.map((r) => r.index);
}

describe('pg-boss fetch index', () => {
  it('is on the immediate queues’ partitions, not on the send-later ones nor on pgboss.job as a whole', async () => {
    const [partition] = await db.execute<{ p: string }>(
      sql`select partition_name as p from pgboss.queue where name = ${QUEUES.smsSend}`,
    );
    expect(await indexesOf(QUEUES.smsSend)).toContain(fetchIndexName(partition!.p));
    expect(await indexesOf(QUEUES.emailSendBulk)).toEqual(expect.arrayContaining([expect.stringMatching(/_fetch_waiting_idx$/)]));
    for (const later of [QUEUES.smsSendLater, QUEUES.emailSendLater]) {
      const names = await indexesOf(later);
      expect(names.length).toBeGreaterThan(0);
      expect(names.filter((n) => n.endsWith('_fetch_waiting_idx'))).toEqual([]);
    }
    const [parent] = await db.execute<{ n: number }>(sql`
      select count(*)::int as n from pg_indexes where schemaname = 'pgboss' and tablename = 'job' and indexname = 'job_fetch_waiting_idx'`);
    expect(parent!.n).toBe(0);
  });
});
