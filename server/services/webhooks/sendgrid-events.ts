import { createHash } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { messages, type MessageStatus } from '@/db/schema';
import { cleanJson } from '@/server/lib/pg-text';
import { int32FromDigits } from '@/server/schemas/common';
import { emailErrorMessage } from '@/server/shared/provider-errors';
import { applyStatusUpdate } from '@/server/services/messages/lifecycle';
import { optOut as suppress } from '@/server/services/messages/suppression';
import { markEvent, processOrRetry, storeEvent } from './events';

export type SendgridEvent = Record<string, unknown> & {
  event?: string;
  sg_event_id?: string;
  sg_message_id?: string;
  email?: string;
};

/** The SendGrid mapping of docs/providers.md#sendgrid-event-mapping; `optOut` events suppress the address, not the status. */
const EVENT_STATUS: Record<string, MessageStatus | 'optOut' | null> = {
  processed: 'sent',
  deferred: null,
  delivered: 'delivered',
  bounce: 'bounced',
  blocked: 'bounced',
  dropped: 'failed',
  open: 'read',
  click: null,
  spamreport: 'optOut',
  unsubscribe: 'optOut',
  group_unsubscribe: 'optOut',
};

const str = (v: unknown) => (typeof v === 'string' && v.length ? v : typeof v === 'number' ? String(v) : null);

/**
 * Finds our message for an event, in the order of docs/providers.md#matching-events-to-messages: the `message_id` unique argument we attach
 * when sending, the `smtp-id` equal to our stored Message-ID, then `sg_message_id` starting with
 * the stored provider id.
 */
async function findMessage(
  event: SendgridEvent,
  tx: Tx = db,
): Promise<{ id: number; businessId: number; toAddress: string | null } | null> {
  const columns = { id: messages.id, businessId: messages.businessId, toAddress: messages.toAddress };
  // The business_id unique argument we attach when sending scopes every lookup to that business
  // (mail sent before it was attached is matched without it).
  const business = int32FromDigits(str(event.business_id));
  const scope = business === null ? undefined : eq(messages.businessId, business);
  const ours = int32FromDigits(str(event.message_id));
  if (ours !== null) {
    const [row] = await tx
      .select(columns)
      .from(messages)
      .where(and(eq(messages.id, ours), eq(messages.channel, 'email'), scope))
      .limit(1);
    if (row) return row;
  }
  const smtpId = str(event['smtp-id']);
  if (smtpId) {
    const [row] = await tx
      .select(columns)
      .from(messages)
      .where(and(eq(messages.emailMessageId, smtpId), eq(messages.channel, 'email'), scope))
      .limit(1);
    if (row) return row;
  }
  const sgId = str(event.sg_message_id);
  if (sgId) {
    const prefix = sgId.split('.')[0]!;
    const [row] = await tx
      .select(columns)
      .from(messages)
      .where(and(eq(messages.channel, 'email'), sql`${messages.providerMessageId} in (${prefix}, ${sgId})`, scope))
      .limit(1);
    if (row) return row;
  }
  return null;
}

/**
 * One SendGrid Event Webhook batch (verified): each event stored (deduplicated by sg_event_id),
 * then applied. An element that is no event (null, a number, an object nested past what any event
 * holds) is counted as received and skipped: the batch as a whole is understood, so SendGrid gets
 * its 200 and does not retry it. Text PostgreSQL cannot store is cleaned, and the batch's exact
 * bytes are kept with each event that needed it.
 */
export async function handleSendgridEvents(
  events: unknown[],
  headers: Record<string, string>,
  rawBody: Buffer | null = null,
  tx: Tx = db,
) {
  let stored = 0;
  let duplicates = 0;
  for (const candidate of events) {
    if (candidate === null || typeof candidate !== 'object' || Array.isArray(candidate)) continue;
    const { changed, tooDeep } = cleanJson(candidate);
    if (tooDeep) continue;
    const event = candidate as SendgridEvent;
    const dedupeKey = str(event.sg_event_id) ?? createHash('sha256').update(JSON.stringify(event)).digest('hex');
    const eventId = await storeEvent(
      {
        provider: 'sendgrid',
        kind: 'sendgrid_event',
        dedupeKey,
        headers,
        payload: event,
        rawBody: changed ? rawBody : null,
      },
      tx,
    );
    if (eventId === null) {
      duplicates++;
      continue;
    }
    stored++;
    await processOrRetry(eventId, 'sendgrid_event', () => applySendgridEvent(eventId, event, tx), tx);
  }
  return { received: events.length, stored, duplicates };
}

/** Applies one stored event; idempotent (statuses only move forward), so a retry is safe. */
export async function applySendgridEvent(eventId: number, event: SendgridEvent, tx: Tx = db): Promise<void> {
  const type = str(event.event) ?? '';
  const effect = EVENT_STATUS[type];
  const message = await findMessage(event, tx);
  if (!message) return markEvent(eventId, 'ignored', { error: 'No message matches this event' }, tx);
  // The address the email went to is suppressed, for every client row carrying it.
  const optOut = (tx: Tx = db) =>
    suppress(
      {
        businessId: message.businessId,
        channel: 'email',
        address: message.toAddress ?? str(event.email) ?? '',
        source: 'provider_error',
        messageId: message.id,
      },
      tx,
    );
  if (effect === 'optOut') {
    await optOut(tx);
    return markEvent(eventId, 'processed', { businessId: message.businessId }, tx);
  }
  // A bounce suppresses the address even after delivery (docs/providers.md#sendgrid-event-mapping); the status rule decides the rest.
  if (effect === 'bounced') await optOut(tx);
  if (!effect) return markEvent(eventId, 'ignored', { businessId: message.businessId }, tx);
  const errorCode = str(event.status) ?? str(event.type) ?? (effect === 'failed' ? 'dropped' : null);
  const reason = str(event.reason) ?? str(event.response);
  const result = await tx.transaction((tx) =>
    applyStatusUpdate(
      { businessId: message.businessId, messageId: message.id },
      {
        status: effect,
        errorCode,
        // Plain words for the codes we know (docs/providers.md#error-codes-staff-see), SendGrid's reason kept after.
        errorMessage: emailErrorMessage(errorCode, reason) ?? reason,
      },
      { type: 'provider' },
      tx,
    ),
  );
  await markEvent(eventId, result.updated ? 'processed' : 'ignored', { businessId: message.businessId }, tx);
}
