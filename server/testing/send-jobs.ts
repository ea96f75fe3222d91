import { sql } from 'drizzle-orm';
import { db } from '@/server/db/client';

/** `attempt`: the message's attempt a chunk job was enqueued for; null for a one-message job (any attempt). */
export type SendJobRow = {
  id: string;
  name: string;
  message_id: number;
  attempt: number | null;
  state: string;
  retry_count: number;
};

/**
 * The pg-boss jobs that carry these messages, in any queue and either form (a one-message job's
 * `messageId`, a bulk chunk's `messageIds`): one row per (job, message), by message id then job.
 */
export async function sendJobsFor(ids: number[]): Promise<SendJobRow[]> {
  const rows = await db.execute<SendJobRow>(sql`
    select j.id::text as id, j.name, m.id as message_id, m.attempt, j.state::text as state, j.retry_count
    from pgboss.job j
    cross join lateral (
      select case when j.data->>'messageId' ~ '^[0-9]{1,18}$' then (j.data->>'messageId')::bigint end as id, null::int as attempt
      union all
      select case when x.value ~ '^[0-9]{1,18}$' then x.value::bigint end, (j.data->'attempts'->>(x.n::int - 1))::int
      from jsonb_array_elements_text(case when jsonb_typeof(j.data->'messageIds') = 'array' then j.data->'messageIds' else '[]' end)
        with ordinality x(value, n)
    ) m
    where m.id = any(${sql.param(ids)}::bigint[])
    order by m.id, j.created_on, j.id`);
  return [...rows];
}
