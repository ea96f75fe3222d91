import { sql } from 'drizzle-orm';
import { db } from '@/db/client';

export type SendJobRow = { id: string; name: string; message_id: number; state: string; retry_count: number };

/**
 * The pg-boss jobs that carry these messages, in any queue and either form (a one-message job's
 * `messageId`, a bulk chunk's `messageIds`): one row per (job, message), by message id then job.
 */
export async function sendJobsFor(ids: number[]): Promise<SendJobRow[]> {
  const rows = await db.execute<SendJobRow>(sql`
    select j.id::text as id, j.name, m.id as message_id, j.state::text as state, j.retry_count
    from pgboss.job j
    cross join lateral (
      select (j.data->>'messageId')::bigint as id
      union all
      select x::bigint from jsonb_array_elements_text(case when jsonb_typeof(j.data->'messageIds') = 'array' then j.data->'messageIds' else '[]' end) x
    ) m
    where m.id = any(${sql.param(ids)}::bigint[])
    order by m.id, j.created_on, j.id`);
  return [...rows];
}
