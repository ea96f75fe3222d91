import { sql } from 'drizzle-orm';
import { db } from '@/db/client';
import { param, type FormParams } from '@/server/providers/twilio-signature';
import { mapTwilioMessageStatus } from '@/server/providers/twilio-status';
import { EVENTS_CHANNEL } from '@/server/realtime/publish';
import { enqueue } from '@/server/jobs/enqueue';
import { QUEUES } from '@/server/jobs/queues';

const ERROR_STATUSES = ['failed', 'undelivered'];

/**
 * A Twilio SMS status callback in ONE statement (the hot webhook path, ≈ verify + 1 round trip):
 * store the raw event deduplicated by (MessageSid, MessageStatus, ErrorCode), move the message's
 * status forward only if the new one ranks higher (SPEC §4.1), record the outcome on the event and
 * NOTIFY the inbox. An event whose MessageSid matches no message yet (a callback racing the
 * worker that stores the sid) stays `pending` and is retried by a job.
 */
export async function handleSmsStatusCallback(params: FormParams, headers: Record<string, string>): Promise<'applied' | 'ignored' | 'duplicate' | 'unmatched'> {
  const sid = param(params, 'MessageSid') ?? param(params, 'SmsSid') ?? '';
  const twilioStatus = param(params, 'MessageStatus') ?? param(params, 'SmsStatus') ?? '';
  const errorCode = param(params, 'ErrorCode') ?? null;
  const status = mapTwilioMessageStatus(twilioStatus);
  const dedupeKey = `${sid}:${twilioStatus}:${errorCode ?? ''}`;
  const carriesError = status !== null && ERROR_STATUSES.includes(status);
  const [row] = await db.execute<{ event_id: number | null; matched: number | null; updated: number | null }>(sql`
    with target as (
      select m.id, m.business_id, m.conversation_id, m.status, m.message_type,
        ${status}::text is not null and message_status_rank(m.status, m.message_type) < message_status_rank(${status}, m.message_type) as moves
      from messages m
      where m.provider_message_id = ${sid} and m.provider in ('twilio', 'sandbox')
      limit 1
    ), ev as (
      -- The outcome is decided from the same snapshot the update below uses (sibling CTEs cannot
      -- see each other's writes, so the event row is written complete, once).
      insert into webhook_events (provider, kind, dedupe_key, headers, payload, outcome, business_id, processed_at, attempts)
      select 'twilio', 'sms_status', ${dedupeKey}, ${JSON.stringify(headers)}::jsonb, ${JSON.stringify(params)}::jsonb,
        case when t.id is null then 'pending' when t.moves then 'processed' else 'ignored' end,
        t.business_id, case when t.id is not null then now() end, 1
      from (select 1) one left join target t on true
      on conflict do nothing
      returning id
    ), upd as (
      update messages m set
        status = ${status},
        status_updated_at = now(),
        error_code = case when ${carriesError} then ${errorCode} else null end,
        error_message = case when ${carriesError} and ${errorCode}::text is not null then 'Twilio error ' || ${errorCode} else null end
      from target t
      where m.id = t.id and t.moves and exists (select 1 from ev)
        and message_status_rank(m.status, m.message_type) < message_status_rank(${status}, m.message_type)
      returning m.id, m.business_id, m.conversation_id
    ), notify as (
      select pg_notify(${EVENTS_CHANNEL}, json_build_object('type', 'message.status', 'businessId', upd.business_id,
        'conversationIds', json_build_array(upd.conversation_id), 'messageIds', json_build_array(upd.id))::text)
      from upd
    )
    select (select id from ev) as event_id, (select id from target) as matched, (select count(*) from notify)::int as updated`);
  if (!row?.event_id) return 'duplicate';
  if (!row.matched) {
    await enqueue(db, QUEUES.webhookRetry, [{ data: { eventId: row.event_id }, startAfterSeconds: 3 }]);
    return 'unmatched';
  }
  return row.updated ? 'applied' : 'ignored';
}
