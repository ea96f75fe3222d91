/**
 * What the message statuses mean, written once for the server, the schemas and the inbox. The order
 * of statuses (a status only moves forward) is the database function message_status_rank; see
 * docs/api.md#message-statuses.
 */

/** Every message status: the DB CHECK constraint and the zod schemas read it through db/schema/enums.ts. */
export const MESSAGE_STATUSES = [
  'initiated',
  'scheduled',
  'queued',
  'sending',
  'sent',
  'delivered',
  'read',
  'received',
  'undelivered',
  'failed',
  'bounced',
  'canceled',
  'ringing',
  'in_progress',
  'completed',
  'busy',
  'no_answer',
] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** Statuses that carry an error code and a reason (`error_code`, `error_message`). */
export const ERROR_STATUSES = ['failed', 'undelivered', 'bounced'] as const satisfies readonly MessageStatus[];

/** Statuses the inbox shows as a problem: the error statuses, and `canceled` (no reason to give). */
export const PROBLEM_STATUSES = [...ERROR_STATUSES, 'canceled'] as const satisfies readonly MessageStatus[];

/** A text or email on its way out: the send pipeline owns it until the provider accepts or refuses it. */
export const IN_FLIGHT_STATUSES = ['queued', 'sending'] as const satisfies readonly MessageStatus[];

/**
 * What a caller may record (record mode) or report (the status endpoints) of a text or email: what
 * already happened elsewhere. Never `queued` or `sending`, which would hand the message to a send
 * worker, nor `scheduled` (send later's own), nor the statuses only calls and inbound messages hold
 * (docs/api.md#record-mode).
 */
export const REPORTABLE_STATUSES = [
  'initiated',
  'sent',
  'delivered',
  'read',
  'undelivered',
  'failed',
  'bounced',
  'canceled',
] as const satisfies readonly MessageStatus[];

/** The retry operations start a new attempt of an outbound message in these statuses. */
export const RETRYABLE_STATUSES = ['failed', 'undelivered'] as const satisfies readonly MessageStatus[];

/**
 * A send request naming a stored message (`message_id`) queues it again in these statuses: never
 * sent (`initiated`) or retryable. Anything further along is refused, so nothing is sent twice.
 */
export const RESENDABLE_STATUSES = ['initiated', ...RETRYABLE_STATUSES] as const satisfies readonly MessageStatus[];

export const isStatusIn = (statuses: readonly MessageStatus[], status: string): boolean =>
  (statuses as readonly string[]).includes(status);
