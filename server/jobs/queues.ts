import type PgBoss from 'pg-boss';

/**
 * Every queue the system knows, with its retry policy. Web processes enqueue into them (inside the
 * caller's transaction); the worker process creates them at start and registers their handlers.
 * Payloads carry ids only: handlers re-read state, so a retried job is safe.
 */
export const QUEUES = {
  smsSend: 'sms.send',
  smsSendDead: 'sms.send.dead',
  emailSend: 'email.send',
  emailSendDead: 'email.send.dead',
  sandboxStatus: 'sandbox.status',
  webhookRetry: 'webhook.retry',
  clientsImport: 'clients.import',
  maintenance: 'system.maintenance',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export const QUEUE_OPTIONS: Record<QueueName, Omit<PgBoss.Queue, 'name'>> = {
  [QUEUES.smsSendDead]: { retryLimit: 0 },
  [QUEUES.emailSendDead]: { retryLimit: 0 },
  // expireInSeconds bounds how long a worker that died mid-send holds a job before it is retried
  // (and reconciled); it must exceed one batch's provider timeout (10 s, all sends in parallel).
  [QUEUES.smsSend]: { retryLimit: 5, retryDelay: 2, retryBackoff: true, expireInSeconds: 60, deadLetter: QUEUES.smsSendDead },
  [QUEUES.emailSend]: {
    retryLimit: 5,
    retryDelay: 5,
    retryBackoff: true,
    expireInSeconds: 120,
    deadLetter: QUEUES.emailSendDead,
  },
  [QUEUES.sandboxStatus]: { retryLimit: 3, retryDelay: 1, expireInSeconds: 60 },
  // Reprocessing of stored webhook events whose first processing failed or found nothing yet.
  [QUEUES.webhookRetry]: { retryLimit: 8, retryDelay: 5, retryBackoff: true, expireInSeconds: 120 },
  // Onboarding's background client import: one job per chunk of up to 1,000 validated clients (idempotent handler).
  [QUEUES.clientsImport]: { retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: 300 },
  [QUEUES.maintenance]: { retryLimit: 1, expireInSeconds: 300, policy: 'singleton' },
};

/**
 * Creates missing queues and brings existing ones to the policy above. Dead-letter queues come
 * first in QUEUE_OPTIONS: a queue naming one as its deadLetter needs it to exist.
 */
export async function createQueues(boss: PgBoss): Promise<void> {
  const existing = new Set((await boss.getQueues()).map((q) => q.name));
  for (const [name, options] of Object.entries(QUEUE_OPTIONS)) {
    if (existing.has(name)) await boss.updateQueue(name, { name, ...options });
    else await boss.createQueue(name, { name, ...options });
  }
}
