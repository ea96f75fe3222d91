import { sql } from 'drizzle-orm';
import type PgBoss from 'pg-boss';
import { db } from '@/db/client';
import type { MessageStatus, Provider } from '@/db/schema';
import type { SendJob } from '@/server/jobs/queues';
import { publish } from '@/server/realtime/publish';
import type { JobOutcome } from './batch-loop';

export type SendResult =
  | {
      messageId: number;
      kind: 'sent';
      providerMessageId: string;
      status: MessageStatus;
      segments: number | null;
      emailMessageId?: string;
      errorCode?: string | null;
    }
  | { messageId: number; kind: 'permanent'; code: string; message: string; optedOut?: boolean }
  | { messageId: number; kind: 'transient' | 'unknown'; code: string; message: string; lastAttempt: boolean };

/**
 * Writes a batch's outcomes in a few set-based statements and decides each job's fate:
 *  - sent: provider id stored, status at least `sent` (the provider accepted it), job done;
 *  - permanent: `failed` with the provider's code, never retried (21610 also opts the client out);
 *  - transient: back to `queued` and the job fails, so pg-boss retries it with backoff;
 *  - unknown (timeout): left `sending`, the job fails, and the retry reconciles before resending;
 *  - transient/unknown on the last attempt: `failed` with the last error, visibly.
 */
export async function finishSends(
  results: SendResult[],
  jobByMessage: Map<number, PgBoss.JobWithMetadata<SendJob>>,
  provider: Provider,
): Promise<Map<string, JobOutcome>> {
  const outcomes = new Map<string, JobOutcome>();
  const sent = results.filter((r) => r.kind === 'sent');
  const failedNow = results.filter(
    (r): r is Exclude<SendResult, { kind: 'sent' }> =>
      r.kind === 'permanent' || ((r.kind === 'transient' || r.kind === 'unknown') && r.lastAttempt),
  );
  const requeue = results.filter((r) => r.kind === 'transient' && !r.lastAttempt).map((r) => r.messageId);
  const touched: { id: number; business_id: number; conversation_id: number }[] = [];

  if (sent.length) {
    const rows = await db.execute<{ id: number; business_id: number; conversation_id: number }>(sql`
      update messages m set
        provider = ${provider},
        provider_message_id = v.sid,
        email_message_id = coalesce(v.email_message_id, m.email_message_id),
        status = case when message_status_rank(v.status, m.message_type) > message_status_rank('sent', m.message_type)
                      then v.status else 'sent' end,
        segments = coalesce(v.segments, m.segments),
        -- Reconciliation can find a message that already failed at the provider: keep why.
        error_code = case when v.status in ('failed', 'undelivered') then coalesce(v.error_code, 'provider_failed') end,
        error_message = case when v.status in ('failed', 'undelivered')
                             then coalesce('Twilio error ' || v.error_code, 'The provider reports the message ' || v.status) end,
        status_updated_at = now()
      from unnest(${sql.param(sent.map((r) => r.messageId))}::bigint[], ${sql.param(sent.map((r) => r.providerMessageId))}::text[],
                  ${sql.param(sent.map((r) => r.status))}::text[], ${sql.param(sent.map((r) => r.segments))}::int[],
                  ${sql.param(sent.map((r) => r.emailMessageId ?? null))}::text[], ${sql.param(sent.map((r) => r.errorCode ?? null))}::text[])
           as v(id, sid, status, segments, email_message_id, error_code)
      where m.id = v.id and m.status = 'sending'
      returning m.id::int as id, m.business_id, m.conversation_id`);
    touched.push(...rows);
  }
  if (failedNow.length) {
    const rows = await db.execute<{ id: number; business_id: number; conversation_id: number }>(sql`
      update messages m set status = 'failed', provider = ${provider}, error_code = v.code, error_message = v.msg, status_updated_at = now()
      from unnest(${sql.param(failedNow.map((r) => r.messageId))}::bigint[], ${sql.param(failedNow.map((r) => r.code))}::text[],
                  ${sql.param(failedNow.map((r) => r.message))}::text[]) as v(id, code, msg)
      where m.id = v.id and m.status in ('queued', 'sending')
      returning m.id::int as id, m.business_id, m.conversation_id`);
    touched.push(...rows);
    const optedOut = failedNow.filter((r) => r.kind === 'permanent' && r.optedOut).map((r) => r.messageId);
    if (optedOut.length) {
      await db.execute(sql`
        update clients c set opted_out_sms = true, updated_at = now()
        from messages m where m.id = any(${sql.param(optedOut)}::bigint[]) and c.id = m.client_id`);
    }
  }
  if (requeue.length) {
    await db.execute(sql`update messages set status = 'queued', status_updated_at = now()
                         where id = any(${sql.param(requeue)}::bigint[]) and status = 'sending'`);
  }

  for (const r of results) {
    const job = jobByMessage.get(r.messageId)!;
    const retry = (r.kind === 'transient' || r.kind === 'unknown') && !r.lastAttempt;
    outcomes.set(job.id, retry ? { ok: false, error: `${r.code}: ${r.message}` } : { ok: true });
  }

  const byBusiness = new Map<number, typeof touched>();
  for (const row of touched) byBusiness.set(row.business_id, [...(byBusiness.get(row.business_id) ?? []), row]);
  for (const [businessId, rows] of byBusiness) {
    await publish(db, {
      type: 'message.status',
      businessId,
      conversationIds: rows.map((r) => r.conversation_id),
      messageIds: rows.map((r) => r.id),
    });
  }
  return outcomes;
}
