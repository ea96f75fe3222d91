import { eq, sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { businesses } from '@/db/schema';
import { submitSms } from '@/server/services/messages/submit';
import type { RecordedCall } from './call-record';

/**
 * The business setting `missed_call_text` (off when null or blank): after an inbound call nobody
 * answered (missed, or a voicemail), that text goes to the caller as an SMS through the normal
 * outbound pipeline (queued with its send job, like `POST /sms`), at most once per client per day
 * in the business's timezone. Safe to call after every write of a call: it decides nothing twice.
 *
 * Concurrent callbacks of the same client are serialised by a transaction-scoped advisory lock
 * held while checking and queueing; the SMS is queued inside that same transaction (submitSms with
 * `tx`: one connection, so the check, the message and its send job commit or vanish together, and
 * no holder ever waits for a second pooled connection: with one each, a burst of missed calls from
 * as many clients as the pool has connections used to hang every query of the process). It is a
 * *try* lock: whoever does not get it can stop, the holder is deciding for the same client.
 * Returns the queued message's id, or null when nothing was sent.
 */
export async function ensureMissedCallText(call: RecordedCall, tx: Tx = db): Promise<number | null> {
  if (call.direction !== 'inbound' || !call.callOutcome) return null;
  const [business] = await tx
    .select({ settings: businesses.settings, timezone: businesses.timezone })
    .from(businesses)
    .where(eq(businesses.id, call.businessId))
    .limit(1);
  const text = business?.settings.missed_call_text?.trim();
  if (!business || !text) return null;

  return tx.transaction(async (tx) => {
    const [lock] = await tx.execute<{ locked: boolean }>(
      sql`select pg_try_advisory_xact_lock(${call.businessId}, hashtext(${`missed-call-text:${call.clientId}`})) as locked`,
    );
    if (!lock?.locked) return null;
    // Already texted today, or for this very call (whose callbacks may straddle midnight).
    const [already] = await tx.execute(sql`
      select 1 from messages
      where business_id = ${call.businessId} and conversation_id = ${call.conversationId}
        and direction = 'outbound' and provider_metadata->>'missed_call_sid' is not null
        and sent_at >= least(date_trunc('day', now() at time zone ${business.timezone}) at time zone ${business.timezone}, ${call.sentAt.toISOString()}::timestamptz)
      limit 1`);
    if (already) return null;
    const queued = await submitSms(
      call.businessId,
      {
        category: 'transactional',
        sender_type: 'system',
        // The answer to the client's own call a moment ago: not held by quiet hours (docs/api.md#quiet-hours).
        override_quiet_hours: true,
        messages: [{ client_id: call.clientId, message: text, provider_metadata: { missed_call_sid: call.callSid } }],
      },
      'send',
      {},
      tx,
    );
    return queued.message_ids[0] ?? null;
  });
}
