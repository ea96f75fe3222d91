import type { MessageStatus } from '@/db/schema';

/**
 * What the send workers need from a provider. Providers are transport adapters only: no database,
 * no business rules. They classify failures so the worker knows whether to retry.
 */

/** transient: retry later with backoff (network, 5xx, 429, SMTP 4xx). permanent: fail the message now. */
/**
 * `transient`: not sent, safe to send again later; `permanent`: refused, never retried; `unknown`:
 * the provider may have accepted it (timeout, reset, 5xx), so it is looked up before any resend.
 */
type ProviderErrorKind = 'transient' | 'permanent' | 'unknown';

export class ProviderError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    /** The provider's own code as text: Twilio `21211`, SMTP `550`, or ours (`ECONNREFUSED`, `timeout`). */
    readonly code: string,
    message: string,
    /** Set when the failure means the recipient opted out (Twilio 21610). */
    readonly optedOut = false,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

export type SmsSendRequest = {
  /** Our message id, for logs and correlation. */
  messageId: number;
  to: string;
  from: string;
  body: string;
  mediaUrls?: string[];
  /** Absolute URL of our SMS status webhook. */
  statusCallback: string;
};

export type SmsSendResult = {
  providerMessageId: string;
  /** Our status for the provider's answer (Twilio `queued`/`accepted` → `queued`, `sent` → `sent`…). */
  status: MessageStatus;
  segments?: number;
  /** The provider's error code when the message already failed there (found by reconciliation). */
  errorCode?: string | null;
};

export interface SmsProvider {
  readonly name: 'twilio' | 'sandbox';
  send(request: SmsSendRequest): Promise<SmsSendResult>;
  /**
   * After a crash with an unknown outcome: a message this account already sent to `to` from
   * `from` with this exact body at or after `since`, or null. Never guess: null means "not sent".
   */
  /** `excluding`: provider ids of this message's earlier attempts, which are not the one looked for. */
  findSent(query: { to: string; from: string; body: string; since: Date; excluding?: string[] }): Promise<SmsSendResult | null>;
}

export type EmailAttachmentInput = {
  filename: string;
  contentType?: string | null;
  /** base64 */
  content?: string | null;
  url?: string | null;
};

export type EmailSendRequest = {
  /**
   * The conversation message this email is (`messages.id`), sent as MESSAGE_ID_HEADER and SendGrid's
   * `message_id` unique argument so the provider's events find it. Null for mail that is no message
   * (a staff notification, server/services/notifications/email.ts): neither is sent, so no event of
   * that mail can be taken for a message's.
   */
  messageId: number | null;
  /** Sent along (SendGrid unique args) so provider events are matched within this business only. */
  businessId?: number;
  /** The RFC 5322 Message-ID to send with, stored before sending so a crash leaves a trace. */
  emailMessageId?: string;
  from: string;
  fromName?: string | null;
  to: string;
  cc?: string[];
  bcc?: string[];
  subject: string;
  text: string;
  html?: string | null;
  attachments?: EmailAttachmentInput[];
  inReplyTo?: string | null;
  references?: string[];
};

export type EmailSendResult = {
  /** RFC 5322 Message-ID as sent, e.g. `<uuid@studio.example>`; also our provider id for SMTP. */
  messageId: string;
  accepted: string[];
  rejected: string[];
};

export interface EmailProvider {
  readonly name: 'smtp' | 'sandbox';
  send(request: EmailSendRequest): Promise<EmailSendResult>;
  close(): Promise<void>;
}

/** Header carrying our message id on every email, and the SendGrid unique argument of the same. */
export const MESSAGE_ID_HEADER = 'X-Message-ID-Internal';
