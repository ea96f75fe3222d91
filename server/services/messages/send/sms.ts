import { sql } from 'drizzle-orm';
import pLimit from 'p-limit';
import { db, type Tx } from '@/server/db/client';
import type { MessageStatus } from '@/db/schema';
import { enqueue } from '@/server/jobs/enqueue';
import { QUEUES } from '@/server/jobs/queues';
import type { Logger } from '@/server/logger';
import { SANDBOX_PLAYBACK } from '@/server/providers/sandbox';
import { ProviderError, type SmsProvider, type SmsSendResult } from '@/server/providers/types';
import type { JobOutcome } from '@/server/jobs/outcomes';
import { finishSends, sendTargets, type AnySendJob, type SendResult } from './results';
import {
  claimForSendingCtes,
  holdUntilWindowOpens,
  NO_MARKETING_CONSENT,
  OPTED_OUT,
  wentLaterIn,
} from '@/server/services/messages/lifecycle';
import { refreshLatestMessages } from '@/server/services/conversations/activity';
import { marketingConsentMissingSql } from '@/server/services/compliance/consent';
import { suppressedSql } from '@/server/services/messages/suppression';
import { signedMediaUrl } from '@/server/services/messages/media-links';
import { AUTO_REPLY_PASSES_OPT_OUT } from '@/server/services/compliance/auto-replies';

const CONCURRENCY = 50;

type Claimed = {
  id: number;
  business_id: number;
  to_address: string;
  from_address: string;
  content: string;
  /**
   * An MMS's media in order, or null for a plain SMS: a caller's https URL (media_urls), or one of
   * our uploads (media_ids), which goes to Twilio as a signed URL made for this attempt.
   */
  media: ({ url: string; media_id: null } | { url: null; media_id: number })[] | null;
  /** The client opted out of SMS, and this is not an automatic answer allowed through (auto-replies.ts). */
  opted_out: boolean;
  /** A campaign, marketing or review request whose client's marketing consent is not (or no longer) given. */
  no_consent: boolean;
  /** Provider ids of earlier attempts (a retried message): never taken for this attempt's. */
  previous: string[] | null;
};

/**
 * Sends a batch of SMS jobs (docs/architecture.md#life-of-a-message). A message is claimed `queued` → `sending` in one
 * conditional UPDATE before the provider is called, so no two workers send it. A message found
 * already `sending` with no provider id was claimed by an attempt that died after the claim: the
 * provider is asked whether it went out (by To, From, body and time) before anything is resent.
 */
export async function sendSmsBatch(
  jobs: AnySendJob[],
  provider: SmsProvider,
  statusCallback: string,
  log: Logger,
  tx: Tx = db,
): Promise<Map<string, JobOutcome>> {
  const { targets, jobByMessage } = sendTargets(jobs);
  const ids = [...jobByMessage.keys()];
  // Scheduled texts (their jobs are in the send-later queue) keep to quiet hours at send time too.
  if (jobs.some((j) => j.name === QUEUES.smsSendLater)) {
    await tx.transaction((tx) => holdUntilWindowOpens(ids, tx));
  }
  const rows = await tx.execute<Claimed & { stuck_since: Date | null; went_later_in: number | null }>(sql`
    with ${claimForSendingCtes(targets)}
    select m.id, m.business_id, m.to_address, m.from_address, m.content,
           (select jsonb_agg(case when a.value->>'media_id' is not null
                                  then jsonb_build_object('url', null, 'media_id', (a.value->>'media_id')::int)
                                  else jsonb_build_object('url', a.value->>'url', 'media_id', null) end order by a.n)
              from jsonb_array_elements(m.attachments) with ordinality a(value, n)
             where a.value->>'media_id' is not null or a.value->>'url' like 'https://%') as media,
           ${suppressedSql('sms', sql`m.business_id`, sql`m.to_address`)} and not ${AUTO_REPLY_PASSES_OPT_OUT} as opted_out,
           ${marketingConsentMissingSql('sms')} as no_consent,
           m.previous_provider_message_ids as previous, a.stuck_since, a.went_later_in
    from attempt a join messages m on m.id = a.id`);
  // docs/api.md#send-later: a scheduled text that goes now moves its conversation up the list.
  await refreshLatestMessages(wentLaterIn(rows), tx);

  const limit = pLimit(CONCURRENCY);
  const results: SendResult[] = await Promise.all(
    rows.map((m) => limit(() => attempt(m, m.stuck_since ? new Date(new Date(m.stuck_since).getTime() - 60_000) : null))),
  );

  async function attempt(m: Claimed, reconcileSince: Date | null): Promise<SendResult> {
    const job = jobByMessage.get(m.id)!;
    const startedAt = new Date(Date.now() - 60_000);
    const lookup = (since: Date) =>
      provider.findSent({ to: m.to_address, from: m.from_address, body: m.content, since, excluding: m.previous ?? [] });
    if (m.opted_out) {
      return { messageId: m.id, kind: 'permanent', code: OPTED_OUT.code, message: OPTED_OUT.reason.sms };
    }
    if (m.no_consent) {
      return { messageId: m.id, kind: 'permanent', code: NO_MARKETING_CONSENT.code, message: NO_MARKETING_CONSENT.reason.sms };
    }
    try {
      let sent: SmsSendResult | null = null;
      if (reconcileSince) {
        sent = await lookup(reconcileSince);
        if (sent) log.info({ message_id: m.id, sid: sent.providerMessageId }, 'reconciled: already sent by an earlier attempt');
      }
      sent ??= await provider.send({
        messageId: m.id,
        to: m.to_address,
        from: m.from_address,
        body: m.content,
        ...(m.media?.length ? { mediaUrls: mediaUrls(m) } : {}),
        statusCallback,
      });
      return sentResult(m.id, sent);
    } catch (err) {
      const result = classify(err, m.id, job);
      // Out of attempts with the outcome unknown: ask the provider once more before calling it failed.
      if (result.kind === 'unknown' && result.lastAttempt) {
        const found = await lookup(reconcileSince ?? startedAt).catch(() => null);
        if (found) return sentResult(m.id, found);
      }
      return result;
    }
  }

  // Messages neither claimed nor stuck were handled already: nothing to do, their job is done.
  const outcomes = await finishSends(results, jobs, jobByMessage, provider.name, tx);
  if (provider.name === 'sandbox') await playSandboxStatuses(results, tx);
  return outcomes;
}

/** What Twilio fetches: the caller's URLs as given, our uploads as URLs signed now (never stored, never logged). */
const mediaUrls = (m: Claimed) => m.media!.map((a) => a.url ?? signedMediaUrl(m.business_id, a.media_id!));

const sentResult = (messageId: number, sent: SmsSendResult): SendResult => ({
  messageId,
  kind: 'sent',
  providerMessageId: sent.providerMessageId,
  status: sent.status,
  segments: sent.segments ?? null,
  errorCode: sent.errorCode,
});

/**
 * Provider errors → what to do. `unknown` (the provider may have accepted it) keeps the message
 * `sending`, so the next attempt looks it up before sending; timeouts of providers that do not
 * classify them (SMTP) count as unknown too; anything unexpected is unknown.
 */
export function classify(err: unknown, messageId: number, job: AnySendJob): SendResult {
  const lastAttempt = job.retryCount >= job.retryLimit;
  if (err instanceof ProviderError) {
    if (err.kind === 'permanent')
      return { messageId, kind: 'permanent', code: err.code, message: err.message, optedOut: err.optedOut };
    const unknown = err.kind === 'unknown' || err.code === 'timeout' || err.code === 'ETIMEDOUT' || err.code === 'ECONNRESET';
    return { messageId, kind: unknown ? 'unknown' : 'transient', code: err.code, message: err.message, lastAttempt };
  }
  return { messageId, kind: 'unknown', code: 'internal', message: (err as Error)?.message ?? String(err), lastAttempt };
}

async function playSandboxStatuses(results: SendResult[], tx: Tx = db) {
  const sids = results.flatMap((r) => (r.kind === 'sent' ? [r.providerMessageId] : []));
  if (sids.length === 0) return;
  await enqueue(
    tx,
    QUEUES.sandboxStatus,
    SANDBOX_PLAYBACK.flatMap((step) =>
      sids.map((sid) => ({
        data: { provider: 'sandbox', providerMessageId: sid, status: step.status as MessageStatus },
        startAfterSeconds: step.afterSeconds,
      })),
    ),
  );
}
