import type { z } from 'zod';
import type { MessageStatus, QuietHoursWindow } from '@/db/schema';
import {
  type RecordEmailRequest,
  type RecordSmsRequest,
  type SendEmailRequest,
  type SendSmsRequest,
} from '@/server/schemas/messages';

/** What the stages of a submission share: the request's shapes and a planned message. */

export type Channel = 'sms' | 'email';
export type Mode = 'send' | 'record';
export type SmsBody = z.output<typeof SendSmsRequest> | z.output<typeof RecordSmsRequest>;
export type EmailBody = z.output<typeof SendEmailRequest> | z.output<typeof RecordEmailRequest>;
export type AnyItem = (SmsBody['messages'] | EmailBody['messages'])[number] & {
  direction?: 'inbound' | 'outbound';
  provider_message_id?: string;
};

export type Planned = {
  index: number;
  clientId: number | null;
  /** Set when no client matched: a new lead is created with this phone or email. */
  newLead: { phone?: string; email?: string } | null;
  to: string;
  from: string;
  content: string;
  subject: string | null;
  status: MessageStatus;
  direction: 'inbound' | 'outbound';
  errorCode: string | null;
  errorMessage: string | null;
  /** When a scheduled message goes: the request's send_at, or quiet hours' next opening. */
  sendAt: Date | null;
  /** The recipient's window this text keeps to (docs/api.md#quiet-hours); null when not held by quiet hours. */
  quietHours: QuietHoursWindow | null;
  holdReason: 'quiet_hours' | null;
  item: AnyItem;
};

/**
 * How quiet hours apply to a request (docs/api.md#quiet-hours). The API: by category and
 * notification type, unless `override_quiet_hours`. The inbox composer (`staffReply`): a staff text
 * in a conversation that is not live is held, unless staff confirmed sending it now.
 */
export type SubmitOptions = { staffReply?: { conversationId: number; sendNow: boolean } };

/** A new message's item with its index in the request (re-queues of stored messages are not new). */
export type NewItem = { item: AnyItem; index: number };
