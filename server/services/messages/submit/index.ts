import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { businesses } from '@/db/schema';
import { AppError, type ValidationIssue } from '@/server/errors';
import { needsMarketingConsent } from '@/server/shared/consent';
import { defaultSmsNumber, staffMember } from '@/server/services/directory';
import { fillFromSavedReplies } from '@/server/services/messages/saved-reply-content';
import { planNewMessages, quietHoursFor } from './plan';
import type { AnyItem, Channel, EmailBody, Mode, SmsBody, SubmitOptions } from './types';
import { validateItems, validateRequest } from './validate';
import { writeSubmission } from './write';

export type { SubmitOptions } from './types';

/**
 * Queue and record operations for SMS and email (docs/api.md#queue-mode, #record-mode). The whole request is
 * resolved and validated first (one 422 lists every bad item by index); then one transaction
 * creates leads and conversations, inserts every message under one request_id, updates the
 * conversations and enqueues one job per message to send. Nothing is stored or sent unless all of
 * it is.
 *
 * The stages: validateRequest (validate.ts: the sender, staff_id, re-queued ids), planNewMessages
 * (plan.ts: each new item's client, destination, quiet hours and refusal), validateItems
 * (validate.ts: the remaining item checks, then the one 422), writeSubmission (write.ts).
 */

export type SubmitResult = { success: true; message: string; request_id: string; message_ids: number[] };

/**
 * `tx`: a caller already in a transaction passes it, and everything here runs on that one
 * connection (the writes in a savepoint). Never call these with `db` while holding a transaction
 * open: the pool could run out with every connection held by a caller waiting for another one.
 */
export async function submitSms(businessId: number, body: SmsBody, mode: Mode, options: SubmitOptions = {}, tx: Tx = db) {
  return submit(businessId, 'sms', body, mode, options, tx);
}

export async function submitEmail(businessId: number, body: EmailBody, mode: Mode, tx: Tx = db) {
  return submit(businessId, 'email', body, mode, {}, tx);
}

async function submit(
  businessId: number,
  channel: Channel,
  body: SmsBody | EmailBody,
  mode: Mode,
  options: SubmitOptions,
  tx: Tx,
): Promise<SubmitResult> {
  const issues: ValidationIssue[] = [];
  // The reads that need only the business id go out together (one wait, not four: each is a
  // round trip of a bulk request's latency; on one transaction's connection they are pipelined).
  const [[business], staffFound, quiet, defaultNumber] = await Promise.all([
    tx.select().from(businesses).where(eq(businesses.id, businessId)).limit(1),
    body.staff_id !== undefined ? staffMember(businessId, body.staff_id, tx) : null,
    mode === 'send' && channel === 'sms' ? quietHoursFor({ tx, businessId, body, options }) : null,
    channel === 'sms' && !(body as SmsBody).from_number ? defaultSmsNumber(businessId, tx) : null,
  ]);
  if (!business) throw AppError.notFound('Business');

  const items = body.messages as AnyItem[];
  // What every stage before the write is told of the request; each collects its 422s in issues.
  const request = { tx, business, channel, mode, body, issues };
  const { from, requeueIds, storedById } = await validateRequest({
    ...request,
    items,
    staffFound: Boolean(staffFound),
    defaultNumber,
  });

  const sendAt = mode === 'send' ? ((body as { send_at?: Date }).send_at ?? null) : null;
  const fresh = items.flatMap((item, index) => (mode === 'record' || item.message_id === undefined ? [{ item, index }] : []));
  // docs/api.md#consent: a campaign, marketing or review request needs each client's marketing consent.
  const marketing = mode === 'send' && needsMarketingConsent(body.category, body.notification_type);
  const planned = await planNewMessages({ ...request, from, fresh, marketing, sendAt, quiet });
  if (mode === 'send') await fillFromSavedReplies(businessId, channel, body.staff_id ?? null, planned, issues, tx);
  const mms = await validateItems({ ...request, businessId, fresh, requeueIds, storedById, sendAt });

  const requestId = randomUUID();
  const ids = await writeSubmission({ tx, businessId, channel, mode, body, requestId, items, planned, requeueIds, mms });

  const verb = mode === 'send' ? (sendAt ? `scheduled for ${sendAt.toISOString()}` : 'queued') : 'recorded';
  const held = planned.filter((p) => p.holdReason === 'quiet_hours').length;
  return {
    success: true,
    message: `${ids.length} ${channel === 'sms' ? 'SMS' : 'email'} message(s) ${verb}${held ? `; ${held} held for quiet hours until the recipient's sending window opens` : ''}`,
    request_id: requestId,
    message_ids: ids,
  };
}
