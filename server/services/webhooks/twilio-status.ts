import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { fixedStatement } from '@/server/db/prepared';
import { enqueue } from '@/server/jobs/enqueue';
import { QUEUES } from '@/server/jobs/queues';
import { param, type FormParams } from '@/server/providers/twilio-signature';
import { mapTwilioMessageStatus } from '@/server/providers/twilio-status';
import { twilioErrorMessage } from '@/server/shared/provider-errors';
import { forwardStatusCtes } from '@/server/services/messages/lifecycle';
import { storedDedupeKey } from './events';

export type StatusCallbackResult = 'applied' | 'ignored' | 'duplicate' | 'unmatched';

type Pending = {
  sid: string;
  /** The sending number: the message is looked for only in the business that owns it. */
  from: string;
  status: string | null;
  errorCode: string | null;
  /** `error_message` for the code: its plain words (server/shared/provider-errors.ts), computed here. */
  errorMessage: string | null;
  dedupeKey: string;
  headers: string;
  payload: string;
  /** The exact body, base64, when the payload had to be cleaned (else null). */
  rawBody: string | null;
  resolve: (r: StatusCallbackResult) => void;
  reject: (e: unknown) => void;
};

/**
 * Twilio SMS status callbacks, group-committed. Each request queues its callback and waits; one
 * flush at a time writes everything queued so far in ONE statement (so under load many callbacks
 * share a round trip and a commit, and alone a callback is written at once). The request answers
 * only after its batch committed: nothing acknowledged is lost.
 *
 * The statement: store every raw event, deduplicated by (MessageSid, MessageStatus, ErrorCode);
 * find its message by MessageSid within the business that owns the sending number (`From`), so no
 * other tenant's message can ever be moved by it;
 * per message, apply the highest-ranked new status only if it ranks above the stored one
 * (docs/api.md#monotonic-updates; reapplying a duplicate is harmless for the same reason); record each event's outcome;
 * NOTIFY the inbox. A MessageSid that matches no message yet (a callback racing the worker that
 * stores the sid) is stored `pending` and retried by a job.
 */
const MAX_BATCH = 500;
let queue: Pending[] = [];
let flushing = false;

export function handleSmsStatusCallback(
  params: FormParams,
  headers: Record<string, string>,
  rawBody: Buffer | null = null,
): Promise<StatusCallbackResult> {
  const sid = param(params, 'MessageSid') ?? param(params, 'SmsSid') ?? '';
  const twilioStatus = param(params, 'MessageStatus') ?? param(params, 'SmsStatus') ?? '';
  const errorCode = param(params, 'ErrorCode') ?? null;
  return new Promise((resolve, reject) => {
    queue.push({
      sid,
      from: param(params, 'From') ?? '',
      status: mapTwilioMessageStatus(twilioStatus),
      errorCode,
      errorMessage: errorCode ? twilioErrorMessage(errorCode) : null,
      dedupeKey: storedDedupeKey(`${sid}:${twilioStatus}:${errorCode ?? ''}`),
      headers: JSON.stringify(headers),
      payload: JSON.stringify(params),
      rawBody: rawBody?.toString('base64') ?? null,
      resolve,
      reject,
    });
    if (!flushing) void flush();
  });
}

/** The group commit: its own statement on the pool, never a caller's transaction (it carries others' callbacks). */
async function flush(): Promise<void> {
  flushing = true;
  // Let the requests that arrived in this turn of the event loop join the batch.
  await new Promise((r) => setImmediate(r));
  while (queue.length) {
    const batch = queue.slice(0, MAX_BATCH);
    queue = queue.slice(batch.length);
    try {
      const results = await writeBatch(batch);
      batch.forEach((p, i) => p.resolve(results[i]!));
    } catch (err) {
      batch.forEach((p) => p.reject(err));
    }
  }
  flushing = false;
}

type Columns = {
  [K in 'sid' | 'from' | 'status' | 'errorCode' | 'errorMessage' | 'dedupeKey' | 'headers' | 'payload' | 'rawBody']: Pending[K][];
};

/**
 * The group-commit statement, its text rendered once and run prepared (server/db/prepared.ts): one round
 * trip per batch instead of two (describe, then execute), no rendering of its CTEs per batch, and a
 * plan PostgreSQL may keep; its only values are the nine columns of the batch, as arrays.
 */
const batchStatement = fixedStatement<Columns>(
  (p) => sql`
    with input as (
      select * from unnest(${p.sid}::text[], ${p.from}::text[], ${p.status}::text[], ${p.errorCode}::text[],
                           ${p.errorMessage}::text[], ${p.dedupeKey}::text[], ${p.headers}::text[],
                           ${p.payload}::text[], ${p.rawBody}::text[])
        with ordinality as i(sid, from_number, status, error_code, error_message, dedupe_key, headers, payload, raw_body, ord)
    ), target as (
      select i.ord, m.id, m.business_id, m.status as current, m.message_type
      from input i
      left join lateral (
        select id, business_id, status, message_type from messages
        where provider_message_id = i.sid and provider in ('twilio', 'sandbox')
          and business_id = (select business_id from business_sms_numbers where phone_number = i.from_number)
        limit 1
      ) m on true
    ), best as (
      -- Per message, the highest-ranked status this batch carries.
      select distinct on (t.id) t.id, i.ord, i.status, i.error_code, i.error_message
      from input i join target t on t.ord = i.ord
      where t.id is not null and i.status is not null
      order by t.id, message_status_rank(i.status, t.message_type) desc nulls last, i.ord
    ), ev as (
      insert into webhook_events (provider, kind, dedupe_key, headers, payload, raw_body, outcome, business_id, processed_at, attempts)
      select distinct on (i.dedupe_key) 'twilio', 'sms_status', i.dedupe_key, i.headers::jsonb, i.payload::jsonb, decode(i.raw_body, 'base64'),
        case when t.id is null then 'pending'
             when b.ord is not null and message_status_rank(t.current, t.message_type) < message_status_rank(i.status, t.message_type) then 'processed'
             else 'ignored' end,
        t.business_id, case when t.id is not null then now() end, 1
      from input i join target t on t.ord = i.ord left join best b on b.ord = i.ord
      order by i.dedupe_key, i.ord
      on conflict do nothing
      returning id, dedupe_key
    ), ${forwardStatusCtes(sql.raw('best'))}
    select i.ord::int as ord, ev.id as event_id, (t.id is not null) as matched,
      (b.ord is not null and message_status_rank(t.current, t.message_type) < message_status_rank(i.status, t.message_type)) as moved,
      (select count(*) from provider_actor) as provider_named
    from input i join target t on t.ord = i.ord left join best b on b.ord = i.ord
    left join ev on ev.dedupe_key = i.dedupe_key and i.ord = (select min(i2.ord) from input i2 where i2.dedupe_key = i.dedupe_key)
    order by i.ord`,
);

async function writeBatch(batch: Pending[], tx: Tx = db): Promise<StatusCallbackResult[]> {
  const col = <K extends keyof Columns>(k: K) => batch.map((p) => p[k]) as Columns[K];
  const rows = await batchStatement<{ ord: number; event_id: number | null; matched: boolean; moved: boolean }>(
    {
      sid: col('sid'),
      from: col('from'),
      status: col('status'),
      errorCode: col('errorCode'),
      errorMessage: col('errorMessage'),
      dedupeKey: col('dedupeKey'),
      headers: col('headers'),
      payload: col('payload'),
      rawBody: col('rawBody'),
    },
    undefined,
    tx,
  );

  const pendingEvents = rows.filter((r) => r.event_id !== null && !r.matched).map((r) => r.event_id!);
  if (pendingEvents.length) {
    await enqueue(
      tx,
      QUEUES.webhookRetry,
      pendingEvents.map((eventId) => ({ data: { eventId }, startAfterSeconds: 3 })),
    );
  }
  return rows.map((r) => (r.event_id === null ? 'duplicate' : !r.matched ? 'unmatched' : r.moved ? 'applied' : 'ignored'));
}
