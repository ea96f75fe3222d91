import { sql, type SQL } from 'drizzle-orm';
import pLimit from 'p-limit';
import { db, type Tx } from '@/server/db/client';
import type { StoredAttachment } from '@/db/schema';
import { enqueue } from '@/server/jobs/enqueue';
import { QUEUES } from '@/server/jobs/queues';
import type { Logger } from '@/server/logger';
import { SANDBOX_PLAYBACK } from '@/server/providers/sandbox';
import { newEmailMessageId } from '@/server/providers/smtp';
import type { EmailProvider } from '@/server/providers/types';
import type { JobOutcome } from '@/server/jobs/outcomes';
import { classify } from './sms';
import { finishSends, sendTargets, type AnySendJob, type SendResult } from './results';
import {
  assignEmailMessageIds,
  claimForSendingCtes,
  NO_MARKETING_CONSENT,
  OPTED_OUT,
  wentLaterIn,
} from '@/server/services/messages/lifecycle';
import { refreshLatestMessages } from '@/server/services/conversations/activity';
import { marketingConsentMissingSql } from '@/server/services/compliance/consent';
import { suppressedSql } from '@/server/services/messages/suppression';

const CONCURRENCY = 20;

type Claimed = {
  id: number;
  from_address: string;
  from_name: string | null;
  business_id: number;
  to_address: string;
  cc: string[] | null;
  bcc: string[] | null;
  subject: string | null;
  content: string | null;
  html: string | null;
  attachments: StoredAttachment[] | null;
  in_reply_to: string | null;
  /** The recipient opted out of email (cc and bcc come already without their opted-out addresses). */
  opted_out: boolean;
  /** A campaign, marketing or review request whose client's marketing consent is not (or no longer) given. */
  no_consent: boolean;
};

/** A cc or bcc list (jsonb array) without the addresses opted out of email (docs/api.md#opt-out); null stays null. */
const withoutSuppressed = (list: SQL) =>
  sql`case when jsonb_typeof(${list}) = 'array' then (
        select coalesce(jsonb_agg(x.address), '[]'::jsonb) from jsonb_array_elements_text(${list}) as x(address)
        where not ${suppressedSql('email', sql`m.business_id`, sql`x.address`)}) end`;

const UNKNOWN_OUTCOME =
  'An earlier attempt may have delivered this email (the worker stopped mid-send); not resent to avoid a duplicate. Retry it if the client did not receive it.';

/**
 * Sends a batch of email jobs. The Message-ID is stored before the SMTP conversation starts: a
 * message found `sending` without one never reached the server and is sent; one found `sending`
 * with one may have, and SMTP cannot be asked, so it fails safe as `unknown_outcome` for a person
 * to review and retry (never twice).
 */
export async function sendEmailBatch(
  jobs: AnySendJob[],
  provider: EmailProvider,
  log: Logger,
  tx: Tx = db,
): Promise<Map<string, JobOutcome>> {
  const { targets, jobByMessage } = sendTargets(jobs);
  const rows = await tx.execute<
    Claimed & { email_message_id: string | null; stuck_since: Date | null; went_later_in: number | null }
  >(sql`
    with ${claimForSendingCtes(targets)}
    select m.id, m.business_id, m.from_address, b.from_name, m.to_address,
           ${withoutSuppressed(sql`m.cc`)} as cc, ${withoutSuppressed(sql`m.bcc`)} as bcc, m.subject, m.content,
           m.provider_metadata->>'html' as html, m.attachments, m.in_reply_to,
           ${suppressedSql('email', sql`m.business_id`, sql`m.to_address`)} as opted_out,
           ${marketingConsentMissingSql('email')} as no_consent, m.email_message_id, a.stuck_since, a.went_later_in
    from attempt a join messages m on m.id = a.id join businesses b on b.id = m.business_id`);
  // docs/api.md#send-later: a scheduled email that goes now moves its conversation up the list.
  await refreshLatestMessages(wentLaterIn(rows), tx);
  const stuckIds = new Set(rows.filter((m) => m.stuck_since).map((m) => m.id));
  const stuck = rows.filter((m) => stuckIds.has(m.id));

  const results: SendResult[] = [];
  for (const m of stuck.filter((s) => s.email_message_id)) {
    log.warn({ message_id: m.id }, 'email outcome unknown after a crash; failed for review, not resent');
    results.push({ messageId: m.id, kind: 'permanent', code: 'unknown_outcome', message: UNKNOWN_OUTCOME });
  }
  const toAttempt = rows.filter((m) => !stuckIds.has(m.id) || !m.email_message_id);
  // Refused before any SMTP conversation, so they get no Message-ID.
  for (const m of toAttempt) {
    const refusal = m.opted_out ? OPTED_OUT : m.no_consent ? NO_MARKETING_CONSENT : null;
    if (refusal) results.push({ messageId: m.id, kind: 'permanent', code: refusal.code, message: refusal.reason.email });
  }
  const toSend = toAttempt.filter((m) => !m.opted_out && !m.no_consent);
  const messageIds = new Map(toSend.map((m) => [m.id, newEmailMessageId(m.from_address)]));
  await assignEmailMessageIds(messageIds, tx);

  const limit = pLimit(CONCURRENCY);
  results.push(
    ...(await Promise.all(
      toSend.map((m) =>
        limit(async (): Promise<SendResult> => {
          try {
            const sent = await provider.send({
              messageId: m.id,
              businessId: m.business_id,
              emailMessageId: messageIds.get(m.id)!,
              from: m.from_address,
              fromName: m.from_name,
              to: m.to_address,
              cc: m.cc?.length ? m.cc : undefined,
              bcc: m.bcc?.length ? m.bcc : undefined,
              subject: m.subject ?? '',
              text: m.content ?? '',
              html: m.html,
              attachments: m.attachments?.map((a) => ({
                filename: a.filename,
                contentType: a.content_type,
                content: a.content ?? null,
                url: a.url,
              })),
              inReplyTo: m.in_reply_to,
            });
            return {
              messageId: m.id,
              kind: 'sent',
              providerMessageId: sent.messageId,
              emailMessageId: sent.messageId,
              status: 'sent',
              segments: null,
            };
          } catch (err) {
            return classify(err, m.id, jobByMessage.get(m.id)!);
          }
        }),
      ),
    )),
  );

  // Messages neither claimed nor stuck were handled already: nothing to do, their job is done.
  const outcomes = await finishSends(results, jobs, jobByMessage, provider.name, tx);
  if (provider.name === 'sandbox') {
    const sids = results.flatMap((r) => (r.kind === 'sent' ? [r.providerMessageId] : []));
    const delivered = SANDBOX_PLAYBACK.filter((s) => s.status === 'delivered');
    await enqueue(
      tx,
      QUEUES.sandboxStatus,
      delivered.flatMap((s) =>
        sids.map((sid) => ({
          data: { provider: 'sandbox', providerMessageId: sid, status: s.status },
          startAfterSeconds: s.afterSeconds,
        })),
      ),
    );
  }
  return outcomes;
}
