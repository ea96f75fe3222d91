import type PgBoss from 'pg-boss';
import { z } from 'zod';
import {
  CLIENT_TYPES,
  CONSENT_CHANNELS,
  CONSENT_PURPOSES,
  CONSENT_SOURCES,
  CONSENT_STATUSES,
  MESSAGE_STATUSES,
  PROVIDERS,
} from '@/db/schema/enums';

/**
 * Every queue the system knows, defined once: its name, its retry policy (pg-boss queue options)
 * and the zod schema of its jobs' data. Web processes enqueue into them (inside the caller's
 * transaction); the worker process creates them at start and registers their handlers.
 * Payloads carry ids only (apart from an import's chunk of rows): handlers re-read state, so a
 * retried job is safe. Payload fields are camelCase.
 *
 * The schemas are the contract between the two sides: `enqueue` takes the payload type they infer
 * (checked at compile time, not parsed, so a bulk enqueue stays cheap), and the worker parses every
 * job's data with them before handling it (what is stored in pgboss.job is not trusted).
 */

/** sms.send / email.send and their send-later queues: one message to send. */
const SendJob = z.object({ messageId: z.number().int(), businessId: z.number().int() });

/**
 * Messages per job of the bulk queues (sms.send.bulk / email.send.bulk): one job per chunk of a
 * request's messages instead of one per message. A worker takes one chunk job at a time, so a
 * chunk is also what one worker loop has in flight at once: each send attempt ends at its provider
 * timeout, and the whole chunk well inside the queue's expiry.
 */
export const BULK_CHUNK = { sms: 50, email: 20 } as const;

/**
 * sms.send.bulk / email.send.bulk: a chunk of one business's messages, each sent as by a SendJob,
 * and the attempt of each it was enqueued for (`messages.attempts`, same order). A chunk job can
 * outlive one of its messages' attempts (it waits to retry another message): a message failed and
 * then retried meanwhile has a job of its own for its new attempt, and this job leaves it alone.
 */
const bulkSendJob = (max: number) =>
  z
    .object({
      messageIds: z.array(z.number().int()).min(1).max(max),
      attempts: z.array(z.number().int().nonnegative()),
      businessId: z.number().int(),
    })
    .refine((j) => j.attempts.length === j.messageIds.length, {
      message: 'attempts must name one attempt per message id',
      path: ['attempts'],
    });
const BulkSmsSendJob = bulkSendJob(BULK_CHUNK.sms);
const BulkEmailSendJob = bulkSendJob(BULK_CHUNK.email);

/** A send job that ran out of attempts, as its queue held it. Dead letters are kept, never worked. */
const DeadSendJob = z.union([SendJob, BulkSmsSendJob]);

/** A sandbox provider's simulated status callback, played back as a delayed job. */
const SandboxStatusJob = z.object({
  provider: z.enum(PROVIDERS),
  providerMessageId: z.string(),
  status: z.enum(MESSAGE_STATUSES),
});

/** A stored webhook event to process again. */
const WebhookRetryJob = z.object({ eventId: z.number().int() });

/**
 * A client as stored in an import chunk: normalised, with omitted fields left out (they keep stored
 * values). Its keys are those of the API's client (`OnboardClient`), which the upsert reads as they
 * are: the rows are data carried by the job, not fields of the job itself.
 */
const ClientImportRow = z.object({
  external_id: z.string(),
  name: z.string().optional(),
  email: z.string().nullish(),
  phone_number: z.string().nullish(),
  gender: z.string().nullish(),
  image_url: z.string().nullish(),
  client_type: z.enum(CLIENT_TYPES).optional(),
  location_external_id: z.string().nullish(),
  timezone: z.string().nullish(),
  /** true: opt the client's number or address out (source `import`); an import never opts anyone back in. */
  opted_out_sms: z.boolean().optional(),
  opted_out_email: z.boolean().optional(),
  /** Consent records, with `recorded_at` fixed when the request was read (server/services/compliance/consent.ts). */
  consents: z
    .array(
      z.object({
        channel: z.enum(CONSENT_CHANNELS),
        purpose: z.enum(CONSENT_PURPOSES),
        status: z.enum(CONSENT_STATUSES),
        source: z.enum(CONSENT_SOURCES),
        note: z.string().nullish(),
        recorded_at: z.string(),
      }),
    )
    .optional(),
});

const clientsImportFields = {
  businessId: z.number().int(),
  importId: z.string(),
  chunk: z.number().int().nonnegative(),
  clients: z.array(ClientImportRow),
};

/**
 * One chunk of a background client import. Jobs enqueued before payloads were camelCase carry
 * `business_id` / `import_id`; they are read under the new names so an import in flight across the
 * upgrade still finishes (`enqueue` only ever writes the camelCase shape).
 */
const ClientsImportJob = z.preprocess((data) => {
  if (typeof data !== 'object' || data === null || !('business_id' in data) || 'businessId' in data) return data;
  const { business_id, import_id, ...rest } = data as Record<string, unknown>;
  return { ...rest, businessId: business_id, importId: import_id };
}, z.object(clientsImportFields));

/** A sweep of one business's unassigned conversations waiting for a reply (docs/api.md#auto-assignment). */
const AssignmentSweepJob = z.object({ businessId: z.number().int() });

/** The maintenance sweep is scheduled by pg-boss's cron, whose jobs carry no data (null): read as {}. */
const MaintenanceJob = z.preprocess((data) => data ?? {}, z.object({}));

type QueueOptions = Omit<PgBoss.Queue, 'name'>;
type QueueDefinition<N extends string, S extends z.ZodType> = { name: N; options: QueueOptions; payload: S };
const queue = <const N extends string, S extends z.ZodType>(name: N, payload: S, options: QueueOptions) =>
  ({ name, options, payload }) satisfies QueueDefinition<N, S>;

const smsSendDead = queue('sms.send.dead', DeadSendJob, { retryLimit: 0 });
const emailSendDead = queue('email.send.dead', DeadSendJob, { retryLimit: 0 });

/**
 * In creation order: a dead-letter queue comes before the queues that name it (`createQueues`
 * checks this), since pg-boss needs it to exist.
 */
export const QUEUE_DEFINITIONS = {
  smsSendDead,
  emailSendDead,
  // expireInSeconds bounds how long a worker that died mid-send holds a job before it is retried
  // (and reconciled); it must exceed one batch's provider timeout (10 s, all sends in parallel).
  smsSend: queue('sms.send', SendJob, {
    retryLimit: 5,
    retryDelay: 2,
    retryBackoff: true,
    expireInSeconds: 60,
    deadLetter: smsSendDead.name,
  }),
  emailSend: queue('email.send', SendJob, {
    retryLimit: 5,
    retryDelay: 5,
    retryBackoff: true,
    expireInSeconds: 120,
    deadLetter: emailSendDead.name,
  }),
  // A request of several messages (a campaign, a bulk API call) is sent from queues of its own, one
  // job per chunk (BULK_CHUNK): a thousand-message request writes twenty jobs, not a thousand, and
  // a staff member's reply in sms.send never waits behind a campaign's backlog. Same retry policy:
  // a chunk job that failed is retried whole, and the claim skips the messages already handled.
  smsSendBulk: queue('sms.send.bulk', BulkSmsSendJob, {
    retryLimit: 5,
    retryDelay: 2,
    retryBackoff: true,
    expireInSeconds: 60,
    deadLetter: smsSendDead.name,
  }),
  emailSendBulk: queue('email.send.bulk', BulkEmailSendJob, {
    retryLimit: 5,
    retryDelay: 5,
    retryBackoff: true,
    expireInSeconds: 120,
    deadLetter: emailSendDead.name,
  }),
  // Send later (docs/api.md#send-later): the same jobs, started after send_at, in queues of their
  // own. In sms.send a backlog of jobs not yet due would sit ahead of due ones in pg-boss's fetch
  // order (by creation), so every fetch of an immediate send would walk past all of them.
  smsSendLater: queue('sms.send.later', SendJob, {
    retryLimit: 5,
    retryDelay: 2,
    retryBackoff: true,
    expireInSeconds: 60,
    deadLetter: smsSendDead.name,
  }),
  emailSendLater: queue('email.send.later', SendJob, {
    retryLimit: 5,
    retryDelay: 5,
    retryBackoff: true,
    expireInSeconds: 120,
    deadLetter: emailSendDead.name,
  }),
  sandboxStatus: queue('sandbox.status', SandboxStatusJob, { retryLimit: 3, retryDelay: 1, expireInSeconds: 60 }),
  // Reprocessing of stored webhook events whose first processing failed or found nothing yet.
  webhookRetry: queue('webhook.retry', WebhookRetryJob, {
    retryLimit: 8,
    retryDelay: 5,
    retryBackoff: true,
    expireInSeconds: 120,
  }),
  // Onboarding's background client import: one job per chunk of up to 1,000 validated clients (idempotent handler).
  clientsImport: queue('clients.import', ClientsImportJob, {
    retryLimit: 5,
    retryDelay: 5,
    retryBackoff: true,
    expireInSeconds: 300,
  }),
  // Auto-assignment's sweeps at a moment no event marks (an opening, a shift start), after a settings
  // change and as a retry; one waiting job per business and moment (`short`: a second is dropped).
  assignmentSweep: queue('assignment.sweep', AssignmentSweepJob, {
    retryLimit: 5,
    retryDelay: 1,
    retryBackoff: true,
    expireInSeconds: 60,
    policy: 'short',
  }),
  maintenance: queue('system.maintenance', MaintenanceJob, { retryLimit: 1, expireInSeconds: 300, policy: 'singleton' }),
};

type Definitions = typeof QUEUE_DEFINITIONS;
type Definition = Definitions[keyof Definitions];

/** Queue names by key: `QUEUES.smsSend` is `'sms.send'`. */
export const QUEUES = Object.fromEntries(Object.entries(QUEUE_DEFINITIONS).map(([key, q]) => [key, q.name])) as {
  readonly [K in keyof Definitions]: Definitions[K]['name'];
};

export type QueueName = Definition['name'];

/** The data of a job of queue `Q`, e.g. `JobPayload<typeof QUEUES.smsSend>` or `JobPayload<'sms.send'>`. */
export type JobPayload<Q extends QueueName> = z.output<Extract<Definition, { name: Q }>['payload']>;

export type SendJob = JobPayload<typeof QUEUES.smsSend>;
export type BulkSendJob = JobPayload<typeof QUEUES.smsSendBulk>;
/** A message a send job sends: any attempt of it (a one-message job), or attempt `attempts` only (a bulk chunk's). */
export type SendTarget = { id: number; attempts: number | null };
/**
 * What a send job's handler sends: its one message (whatever its attempt), or its chunk's messages,
 * each at the attempt the chunk was enqueued for.
 */
export const sendTargetsOf = (data: SendJob | BulkSendJob): SendTarget[] =>
  'messageIds' in data
    ? data.messageIds.map((id, i) => ({ id, attempts: data.attempts[i]! }))
    : [{ id: data.messageId, attempts: null }];
export type SandboxStatusJob = JobPayload<typeof QUEUES.sandboxStatus>;
export type WebhookRetryJob = JobPayload<typeof QUEUES.webhookRetry>;
export type ClientsImportJob = JobPayload<typeof QUEUES.clientsImport>;
export type AssignmentSweepJob = JobPayload<typeof QUEUES.assignmentSweep>;
export type ClientImportRow = z.output<typeof ClientImportRow>;

const byName = new Map<string, Definition>(Object.values(QUEUE_DEFINITIONS).map((q) => [q.name, q]));

/** Each queue's pg-boss options, in creation order. */
export const QUEUE_OPTIONS = Object.fromEntries([...byName].map(([name, q]) => [name, q.options])) as Record<
  QueueName,
  QueueOptions
>;

/**
 * Parses a job's data with its queue's schema. A failure is described in one line that names the
 * queue and the first issues (path and message), ready for a log line and the job's output.
 */
export function parseJobPayload<Q extends QueueName>(
  queue: Q,
  data: unknown,
): { success: true; data: JobPayload<Q> } | { success: false; error: string } {
  const result = byName.get(queue)!.payload.safeParse(data);
  if (result.success) return { success: true, data: result.data as JobPayload<Q> };
  const issues = result.error.issues;
  const described = issues
    .slice(0, 3)
    .map((i) => `${i.path.length ? i.path.join('.') : '(payload)'}: ${i.message}`)
    .join('; ');
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more issues)` : '';
  return { success: false, error: `malformed ${queue} payload: ${described}${more}` };
}

/** Creates missing queues and brings existing ones to the policy above, dead letters first. */
export async function createQueues(boss: PgBoss): Promise<void> {
  const before = new Set<string>();
  for (const { name, options } of byName.values()) {
    if (options.deadLetter && !before.has(options.deadLetter)) {
      throw new Error(`queue ${name}: its dead letter ${options.deadLetter} must be defined before it`);
    }
    before.add(name);
  }
  const existing = new Set((await boss.getQueues()).map((q) => q.name));
  for (const { name, options } of byName.values()) {
    if (existing.has(name)) await boss.updateQueue(name, { name, ...options });
    else await boss.createQueue(name, { name, ...options });
  }
}
