import type PgBoss from 'pg-boss';
import type { Provider } from '@/db/schema';
import type { SendJob } from '@/server/jobs/queues';
import { recordSendResults, type SentResult } from '@/server/services/messages/lifecycle';
import type { JobOutcome } from './batch-loop';

export type SendResult =
  | (SentResult & { kind: 'sent' })
  | { messageId: number; kind: 'permanent'; code: string; message: string; optedOut?: boolean }
  | { messageId: number; kind: 'transient' | 'unknown'; code: string; message: string; lastAttempt: boolean };

/**
 * Decides what each send result means for its message and its job, and has the message lifecycle
 * write the messages in a few set-based statements:
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
  const givesUp = (r: SendResult): r is Exclude<SendResult, { kind: 'sent' }> =>
    r.kind === 'permanent' || ((r.kind === 'transient' || r.kind === 'unknown') && r.lastAttempt);
  await recordSendResults(provider, {
    sent: results.flatMap((r) => (r.kind === 'sent' ? [r] : [])),
    failed: results.filter(givesUp).map((r) => ({
      messageId: r.messageId,
      code: r.code,
      message: r.message,
      optedOut: r.kind === 'permanent' && r.optedOut,
    })),
    requeue: results.filter((r) => r.kind === 'transient' && !r.lastAttempt).map((r) => r.messageId),
  });

  const outcomes = new Map<string, JobOutcome>();
  for (const r of results) {
    const job = jobByMessage.get(r.messageId)!;
    const retry = (r.kind === 'transient' || r.kind === 'unknown') && !r.lastAttempt;
    outcomes.set(job.id, retry ? { ok: false, error: `${r.code}: ${r.message}` } : { ok: true });
  }
  return outcomes;
}
