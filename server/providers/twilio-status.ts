import type { MessageStatus } from '@/db/schema';

const STATUS_MAP: Record<string, MessageStatus | null> = {
  accepted: 'queued',
  scheduled: 'queued',
  queued: 'queued',
  sending: 'sending',
  sent: 'sent',
  delivered: 'delivered',
  undelivered: 'undelivered',
  failed: 'failed',
  canceled: 'canceled',
  read: 'read',
  receiving: 'received',
  received: 'received',
  partially_delivered: null,
};

/**
 * Our status for a Twilio MessageStatus (create/list answers and status callbacks).
 * null = leave the status unchanged (`partially_delivered`); unknown values → `queued`, which the
 * rank rule (docs/api.md#monotonic-updates) never lets move a message backwards.
 */
export function mapTwilioMessageStatus(status: string): MessageStatus | null {
  const mapped = STATUS_MAP[status.toLowerCase()];
  return mapped === undefined ? 'queued' : mapped;
}
