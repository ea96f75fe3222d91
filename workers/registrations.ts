import type PgBoss from 'pg-boss';
import type { Env } from '@/server/env';
import type { JobOutcome } from '@/server/jobs/outcomes';
import { BULK_CHUNK, QUEUES, type JobPayload, type QueueName } from '@/server/jobs/queues';
import type { Logger } from '@/server/logger';
import type { EmailProvider, SmsProvider } from '@/server/providers/types';
import { sweepBusiness } from '@/server/services/assignment';
import { compactConversationCounts } from '@/server/services/conversations/counts';
import { wakeSnoozedConversations } from '@/server/services/conversations';
import { runMaintenance } from '@/server/services/maintenance';
import { sendWaitingDigests } from '@/server/services/notifications/digest';
import { sendDueNotificationEmails } from '@/server/services/notifications/email';
import { importClientsBatch } from '@/server/services/onboarding-import';
import { applyStatusUpdate } from '@/server/services/messages/lifecycle';
import { sendEmailBatch } from '@/server/services/messages/send/email';
import { sendSmsBatch } from '@/server/services/messages/send/sms';
import { requeueOrphanedSends, sweepUnprocessedEvents } from '@/server/services/recovery';
import { mergeSearchIndexPendingLists } from '@/server/services/search';
import { failureReason } from '@/server/services/webhooks/events';
import { reprocessEvent } from '@/server/services/webhooks/retry';

/**
 * What the worker handles: each queue once, with how it is fetched and what handles its jobs, and
 * the periodic tasks. The worker process (./index.ts) starts them all and stops them on a signal;
 * the rules the handlers apply live in the services.
 */

/** What a handler may use, made once when the worker starts. */
export type WorkerContext = {
  config: Env;
  log: Logger;
  sms: SmsProvider;
  email: EmailProvider;
  /** Where Twilio posts the status of the texts this worker sends. */
  statusCallback: string;
};

/**
 * A queue handled by a batch loop (./batch-loop.ts: fetched again at once while there is work):
 * `loops` loops side by side, each fetching up to `batchSize` jobs, sleeping `idleMs` when the
 * queue is empty. The handler returns one outcome per job.
 */
export type LoopRegistration<Q extends QueueName = QueueName> = {
  queue: Q;
  loop: { batchSize: number; loops: number; idleMs: number };
  handle(jobs: PgBoss.JobWithMetadata<JobPayload<Q>>[], worker: WorkerContext): Promise<Map<string, JobOutcome>>;
};

/**
 * A low-volume queue handled by pg-boss's own `work()` with these options; its malformed jobs are
 * failed before the handler sees the others (./job-payloads.ts). `schedule`: a cron expression on
 * which pg-boss sends the queue a job.
 */
export type WorkRegistration<Q extends QueueName = QueueName> = {
  queue: Q;
  work: PgBoss.WorkOptions;
  schedule?: string;
  handle(jobs: PgBoss.Job<JobPayload<Q>>[], worker: WorkerContext): Promise<void>;
};

export type QueueRegistration = ({ kind: 'loop' } & LoopRegistration) | ({ kind: 'work' } & WorkRegistration);

/**
 * Typed by its queue where it is written; one list entry where the worker starts it. The widening
 * is sound because a registration's queue and handler stay together: the worker hands the handler
 * only jobs fetched from that queue, parsed with that queue's schema.
 */
const loop = <Q extends QueueName>(registration: LoopRegistration<Q>): QueueRegistration => ({
  kind: 'loop',
  ...(registration as unknown as LoopRegistration),
});
const work = <Q extends QueueName>(registration: WorkRegistration<Q>): QueueRegistration => ({
  kind: 'work',
  ...(registration as unknown as WorkRegistration),
});

// The same senders on every send queue. A fetch from sms.send / email.send takes many one-message
// jobs; from the bulk queues one chunk job (BULK_CHUNK messages): either way a loop has at most
// 50 texts or 20 emails in flight. An idle bulk loop looks again every 500 ms (a campaign can
// wait that long to start; a reply cannot). Send later (docs/api.md#send-later): jobs started after send_at.
type SmsQueue = typeof QUEUES.smsSend | typeof QUEUES.smsSendBulk | typeof QUEUES.smsSendLater;
type EmailQueue = typeof QUEUES.emailSend | typeof QUEUES.emailSendBulk | typeof QUEUES.emailSendLater;
const smsLoop = (queue: SmsQueue, batchSize: number, loops: number, idleMs: number) =>
  loop({
    queue,
    loop: { batchSize, loops, idleMs },
    handle: (jobs, worker) => sendSmsBatch(jobs, worker.sms, worker.statusCallback, worker.log),
  });
const emailLoop = (queue: EmailQueue, batchSize: number, loops: number, idleMs: number) =>
  loop({
    queue,
    loop: { batchSize, loops, idleMs },
    handle: (jobs, worker) => sendEmailBatch(jobs, worker.email, worker.log),
  });

export const QUEUE_REGISTRATIONS: QueueRegistration[] = [
  smsLoop(QUEUES.smsSend, BULK_CHUNK.sms, 4, 200),
  smsLoop(QUEUES.smsSendBulk, 1, 4, 500),
  emailLoop(QUEUES.emailSend, BULK_CHUNK.email, 2, 250),
  emailLoop(QUEUES.emailSendBulk, 1, 2, 500),
  // As many as the immediate queue: 10,000 texts scheduled for one moment all fall due at once.
  smsLoop(QUEUES.smsSendLater, BULK_CHUNK.sms, 4, 250),
  emailLoop(QUEUES.emailSendLater, BULK_CHUNK.email, 1, 500),
  work({
    queue: QUEUES.sandboxStatus,
    work: { batchSize: 100, pollingIntervalSeconds: 0.5 },
    async handle(jobs) {
      for (const job of jobs) {
        const { provider, providerMessageId, status } = job.data;
        await applyStatusUpdate({ provider, providerMessageId }, { status }, { type: 'provider' });
      }
    },
  }),
  // One outcome per job: an event that still fails must not hold back the others of its batch.
  loop({
    queue: QUEUES.webhookRetry,
    loop: { batchSize: 20, loops: 1, idleMs: 1000 },
    async handle(jobs) {
      const outcomes = new Map<string, JobOutcome>();
      for (const job of jobs) {
        try {
          await reprocessEvent(job.data.eventId, job.retryCount >= job.retryLimit);
          outcomes.set(job.id, { ok: true });
        } catch (err) {
          outcomes.set(job.id, { ok: false, error: failureReason(err) });
        }
      }
      return outcomes;
    },
  }),
  loop({
    queue: QUEUES.clientsImport,
    loop: { batchSize: 1, loops: 2, idleMs: 1000 },
    handle: (jobs, worker) => importClientsBatch(jobs, worker.log),
  }),
  // docs/api.md#auto-assignment: sweeps at an opening or a shift start, after a settings change, and
  // retries; polled every second, so a conversation waiting for the opening is assigned within ~1 s of it.
  work({
    queue: QUEUES.assignmentSweep,
    work: { batchSize: 10, pollingIntervalSeconds: 1 },
    async handle(jobs) {
      for (const job of jobs) await sweepBusiness(job.data.businessId);
    },
  }),
  work({
    queue: QUEUES.maintenance,
    work: {},
    schedule: '*/5 * * * *',
    async handle(jobs, worker) {
      if (jobs.length === 0) return;
      const swept = await runMaintenance();
      worker.log.info({ swept }, 'maintenance sweep');
    },
  }),
];

/**
 * Periodic work, each task one run at a time (./periodic.ts): run every `everyMs`; a failed run is
 * logged as `failure` and, with `pauseAfterFailureMs`, pauses the task that long.
 */
export type PeriodicTask = {
  everyMs: number | ((config: Env) => number);
  run(worker: WorkerContext): Promise<unknown>;
  failure: string;
  pauseAfterFailureMs?: number;
};

export const PERIODIC_TASKS: PeriodicTask[] = [
  // docs/api.md#snooze: a snoozed conversation is open again within 60 s after its time passes.
  // Every 15 s from each worker (an idempotent UPDATE over a partial index), which is tighter
  // than pg-boss's minute-grained cron.
  {
    everyMs: 15_000,
    run: ({ log }) => wakeSnoozedConversations().then((woken) => woken && log.info({ woken }, 'snoozed conversations reopened')),
    failure: 'wake snoozed failed',
  },
  // docs/architecture.md#kept-counts: the filter counts' pending deltas folded every 5 s, so a
  // read sums a few seconds of changes at most (one compaction at a time across workers).
  { everyMs: 5_000, run: () => compactConversationCounts(), failure: 'conversation counts compaction failed' },
  // docs/architecture.md#search-texts: the search indexes' pending entries merged every second by
  // the worker, not by whichever bulk insert finds the pending list full. A failure (typically: the
  // worker's role does not own the indexes) pauses the merges for a minute: logged once a minute.
  {
    everyMs: 1_000,
    run: () => mergeSearchIndexPendingLists(),
    failure: 'search index merge failed; next attempt in a minute',
    pauseAfterFailureMs: 60_000,
  },
  // Recovery (server/services/recovery.ts): webhook events stored but never processed, and
  // messages in flight whose send job is gone. Every 10 s, one sweep at a time per process.
  {
    everyMs: (config) => config.recoverySweepIntervalSeconds * 1000,
    run: ({ log }) =>
      Promise.all([
        sweepUnprocessedEvents(log).then((n) => n && log.info({ events: n }, 'unprocessed webhook events swept')),
        requeueOrphanedSends(log),
      ]),
    failure: 'recovery sweep failed',
  },
  // docs/api.md#email-notifications-and-the-waiting-digest: due notification emails, every 30 s (so
  // one goes within 30 s of its delay), claimed under SKIP LOCKED by whichever worker comes first.
  {
    everyMs: 30_000,
    run: ({ email, log }) =>
      sendDueNotificationEmails(email, new Date(), { log }).then(
        (n) => (n.sent || n.dropped || n.failed) && log.info(n, 'notification emails'),
      ),
    failure: 'notification emails failed',
  },
  // The waiting digest every 5 minutes (a staff member gets one an hour at most; a per-staff lock
  // keeps two workers from both sending it).
  {
    everyMs: 5 * 60_000,
    run: ({ email, log }) =>
      sendWaitingDigests(email, new Date(), { log }).then((sent) => sent && log.info({ sent }, 'waiting digests')),
    failure: 'waiting digests failed',
    pauseAfterFailureMs: 60_000,
  },
];
