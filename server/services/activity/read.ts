import { sql } from 'drizzle-orm';
import { isoTimestamp } from '@/db/sql-json';
import { db, type Tx } from '@/server/db/client';
import { ACTIVITY_TYPES, type ActivityLine } from '@/server/shared/activity';
import { ACTIVITY_HANDLER } from './handler';

/** The most lines one read answers: the newest, from `since` on. */
export const MAX_ACTIVITY_LINES = 200;

/** How far back in the log `behind` looks for events the handler has not written yet. */
const BEHIND_WINDOW = sql`interval '1 hour'`;

export type ConversationActivity = {
  lines: ActivityLine[];
  /**
   * True while the log holds an event of this conversation (or its client) that the activity
   * handler has not turned into a line yet: the worker writes lines a moment after the change, so
   * the inbox reads again shortly (docs/architecture.md#event-log).
   */
  behind: boolean;
};

/**
 * A conversation's activity lines (docs/architecture.md#event-log), newest first: those from `since`
 * on (the time of the oldest message the timeline shows; null: all), at most MAX_ACTIVITY_LINES,
 * with the names of the staff they mention. The conversation is the caller's, already resolved
 * within its business; every read below names the business too.
 */
export async function conversationActivity(
  conversation: { businessId: number; id: number; clientId: number },
  since: Date | null,
  tx: Tx = db,
): Promise<ConversationActivity> {
  const { businessId, id, clientId } = conversation;
  const staffName = (column: ReturnType<typeof sql>) =>
    sql`(select s.name from staff s where s.business_id = a.business_id and s.id = ${column})`;
  // First: committed events of this conversation or its client past the handler's cursor (a missing
  // cursor: the handler never ran, everything is ahead of it), in the log's recent partitions only.
  // Read before the lines, in statements of their own: when it finds none, every line of what came
  // before committed already, and the lines read next include them. The other way round, the
  // handler could commit between the two reads: no line, and nothing behind.
  const types = sql.raw(ACTIVITY_TYPES.map((t) => `'${t}'`).join(', '));
  const [pending] = await tx.execute<{ behind: boolean }>(sql`
    select exists (
      select 1 from events e
      left join event_handler_cursors h on h.handler = ${ACTIVITY_HANDLER}
      where e.business_id = ${businessId} and e.occurred_at > now() - ${BEHIND_WINDOW}
        and (e.tx_id, e.id) > (coalesce(h.tx_id, '0'::xid8), coalesce(h.event_id, 0))
        and e.type in (${types})
        and (e.conversation_id = ${id} or e.client_id = ${clientId} or e.data->'client_ids' @> to_jsonb(${clientId}::int))
    ) as behind`);
  const lines = await tx.execute<ActivityLine>(sql`
    select a.id as activity_id, a.event_id, a.type, ${isoTimestamp(sql`a.occurred_at`)} as occurred_at,
      a.actor_type, a.actor_staff_id, ${staffName(sql`a.actor_staff_id`)} as actor_name,
      case when a.type = 'conversation.assigned' then ${staffName(sql`(a.data->>'staff_id')::int`)} end as staff_name,
      case when a.type = 'conversation.assigned' then ${staffName(sql`(a.data->>'previous_staff_id')::int`)} end as previous_staff_name,
      a.data
    from conversation_activities a
    where a.business_id = ${businessId} and a.conversation_id = ${id}
      ${since ? sql`and a.occurred_at >= ${since.toISOString()}::timestamptz` : sql``}
    order by a.occurred_at desc, a.id desc
    limit ${MAX_ACTIVITY_LINES}`);
  return { lines: [...lines], behind: pending!.behind };
}
