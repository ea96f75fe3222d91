import { db, type Tx } from '@/server/db/client';
import type PgBoss from 'pg-boss';
import type { Provider } from '@/db/schema';
import { sendTargetsOf, type BulkSendJob, type SendJob, type SendTarget } from '@/server/jobs/queues';
import { recordSendResults, type SentResult } from '@/server/services/messages/lifecycle';
import type { JobOutcome } from '@/server/jobs/outcomes';

/** A job of any send queue: one message (sms.send, the send-later queues) or a chunk (the bulk queues). */
export type AnySendJob = PgBoss.JobWithMetadata<SendJob | BulkSendJob>;

/** A fetched batch's messages: what to claim (each at its job's attempt), and each one's job. */
export function sendTargets(jobs: AnySendJob[]): { targets: SendTarget[]; jobByMessage: Map<number, AnySendJob> } {
  const carried = jobs.flatMap((job) => sendTargetsOf(job.data).map((target) => ({ target, job })));
  return { targets: carried.map((c) => c.target), jobByMessage: new Map(carried.map((c) => [c.target.id, c.job])) };
}

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
  jobs: AnySendJob[],
  jobByMessage: Map<number, AnySendJob>,
  provider: Provider,
  tx: Tx = db,
): Promise<Map<string, JobOutcome>> {
  const givesUp = (r: SendResult): r is Exclude<SendResult, { kind: 'sent' }> =>
    r.kind === 'permanent' || ((r.kind === 'transient' || r.kind === 'unknown') && r.lastAttempt);
  await recordSendResults(
    provider,
    {
      sent: results.flatMap((r) => (r.kind === 'sent' ? [r] : [])),
      failed: results.filter(givesUp).map((r) => ({
        messageId: r.messageId,
        code: r.code,
        message: r.message,
        optedOut: r.kind === 'permanent' && r.optedOut,
      })),
      requeue: results.filter((r) => r.kind === 'transient' && !r.lastAttempt).map((r) => r.messageId),
    },
    tx,
  );

  // Every job of the batch is done unless one of its messages is to be tried again: then it fails,
  // and pg-boss retries it whole (a job none of whose messages was attempted, all handled already, is done).
  const outcomes = new Map<string, JobOutcome>(jobs.map((job) => [job.id, { ok: true }]));
  for (const r of results) {
    if ((r.kind === 'transient' || r.kind === 'unknown') && !r.lastAttempt) {
      outcomes.set(jobByMessage.get(r.messageId)!.id, { ok: false, error: `${r.code}: ${r.message}` });
    }
  }
  return outcomes;
}
