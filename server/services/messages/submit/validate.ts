import { and, eq, sql } from 'drizzle-orm';
import type { Tx } from '@/server/db/client';
import { equalsAny } from '@/db/sql-array';
import { businesses, businessEmailSenders, businessSmsNumbers, messages, type StoredAttachment } from '@/db/schema';
import { AppError, type ValidationIssue } from '@/server/errors';
import { normalizePhone } from '@/server/lib/phone';
import { mmsAttachments } from '@/server/services/messages/uploads';
import { isStatusIn, RESENDABLE_STATUSES } from '@/server/shared/message-statuses';
import type { AnyItem, Channel, EmailBody, Mode, NewItem, SmsBody } from './types';

/**
 * The validate stage of a submission: the checks of the request and of its items that the plan
 * stage does not make, each bad one a 422 issue. `validateRequest` runs before the plan (the sender,
 * staff_id, re-queued message ids), `validateItems` after it, and throws the one 422 listing every
 * issue, or a 409 for a stored message that cannot be sent again.
 */

export type RequestOptions = {
  tx: Tx;
  business: typeof businesses.$inferSelect;
  channel: Channel;
  mode: Mode;
  body: SmsBody | EmailBody;
  items: AnyItem[];
  /** Whether body.staff_id names staff of this business (read beforehand with the business). */
  staffFound: boolean;
  /** The business's default SMS number, read beforehand when no from_number is given. */
  defaultNumber: string | null;
  issues: ValidationIssue[];
};

/** A re-queue of a stored message: the item's index and the message's id. */
export type Requeue = { index: number; id: number };

type StoredMessage = Pick<typeof messages.$inferSelect, 'id' | 'status' | 'channel' | 'direction'>;

/** The request's sender, and its re-queues of stored messages with what is stored of them. */
export async function validateRequest({
  tx,
  business,
  channel,
  mode,
  body,
  items,
  staffFound,
  defaultNumber,
  issues,
}: RequestOptions): Promise<{ from: string; requeueIds: Requeue[]; storedById: Map<number, StoredMessage> }> {
  const businessId = business.id;
  // staff_id must be staff of this business, active or not (unlike requireStaff): record mode files
  // history, whose staff may have left since, and a send's staff_id only attributes a message an
  // API caller queues; the inbox sends as its session's staff member, active by resolveSession.
  if (body.staff_id !== undefined && !staffFound) {
    issues.push({ loc: ['body', 'staff_id'], msg: `Staff ${body.staff_id} not found in this business`, type: 'value_error' });
  }

  const from = await resolveSender({ tx, business, channel, body, issues, defaultNumber });

  // docs/api.md#collision-guard: a message id in the body is one of this business's (0: none seen).
  const lastSeen = mode === 'send' ? (body as { last_seen_message_id?: number }).last_seen_message_id : undefined;
  if (lastSeen) {
    const [seen] = await tx
      .select({ id: messages.id })
      .from(messages)
      .where(and(eq(messages.businessId, businessId), eq(messages.id, lastSeen)))
      .limit(1);
    if (!seen)
      issues.push({
        loc: ['body', 'last_seen_message_id'],
        msg: `Message ${lastSeen} not found in this business`,
        type: 'value_error',
      });
  }

  // Re-queues of stored messages (send mode only; record mode ignores message_id).
  const requeueIds =
    mode === 'send' ? items.flatMap((it, index) => (it.message_id !== undefined ? [{ index, id: it.message_id }] : [])) : [];
  const stored = requeueIds.length
    ? await tx
        .select({ id: messages.id, status: messages.status, channel: messages.channel, direction: messages.direction })
        .from(messages)
        .where(
          and(
            eq(messages.businessId, businessId),
            equalsAny(
              messages.id,
              requeueIds.map((r) => r.id),
              'bigint',
            ),
          ),
        )
    : [];
  const storedById = new Map(stored.map((m) => [m.id, m]));
  for (const { index, id } of requeueIds) {
    const m = storedById.get(id);
    if (!m || m.channel !== channel || m.direction !== 'outbound') {
      issues.push({
        loc: ['body', 'messages', index, 'message_id'],
        msg: `Outbound ${channel} message ${id} not found in this business`,
        type: 'value_error',
      });
    }
  }
  return { from, requeueIds, storedById };
}

export type ItemsOptions = {
  tx: Tx;
  businessId: number;
  channel: Channel;
  mode: Mode;
  body: SmsBody | EmailBody;
  fresh: NewItem[];
  requeueIds: Requeue[];
  storedById: Map<number, StoredMessage>;
  sendAt: Date | null;
  issues: ValidationIssue[];
};

/**
 * The items' checks after the plan; then the 422 with every issue found so far, if any, and the 409
 * for a re-queue of a message that was already sent. Answers each SMS item's MMS attachments.
 */
export async function validateItems({
  tx,
  businessId,
  channel,
  mode,
  body,
  fresh,
  requeueIds,
  storedById,
  sendAt,
  issues,
}: ItemsOptions): Promise<Map<number, StoredAttachment[]>> {
  if (mode === 'record') await refuseForeignProviderIds({ tx, businessId, provider: body.provider ?? null, fresh, issues });
  // docs/api.md#mms: an SMS item's media_urls and uploaded media_ids, as its attachments.
  const mms = channel === 'sms' ? await mmsAttachments(businessId, fresh, issues, tx) : new Map<number, StoredAttachment[]>();

  // docs/api.md#send-later: a stored message is re-queued now or not at all.
  if (sendAt) {
    for (const { index } of requeueIds) {
      issues.push({
        loc: ['body', 'messages', index, 'message_id'],
        msg: 'cannot be scheduled: send_at applies to new messages only',
        type: 'value_error',
      });
    }
  }

  if (issues.length) throw new AppError('validation', 'Validation error', { issues });
  for (const { index, id } of requeueIds) {
    const m = storedById.get(id)!;
    if (!isStatusIn(RESENDABLE_STATUSES, m.status)) {
      throw new AppError('conflict', `Message ${id} (messages[${index}]) is already ${m.status}; it is not sent again`);
    }
  }
  return mms;
}

/**
 * The sender of a request: `from_number` / `from_email` when given, else the business's default.
 * A given sender must be the business's own (one of its SMS numbers; its from_email or one of its
 * declared sender addresses), else 422: a business never sends as another one (replies, and a
 * STOP, would land at the other business).
 */
async function resolveSender({
  tx,
  business,
  channel,
  body,
  issues,
  defaultNumber,
}: Pick<RequestOptions, 'tx' | 'business' | 'channel' | 'body' | 'issues' | 'defaultNumber'>): Promise<string> {
  if (channel === 'email') {
    const given = (body as EmailBody).from_email;
    if (given !== undefined) {
      const owned = given === business.fromEmail?.toLowerCase() || (await ownsSenderAddress(business.id, given, tx));
      if (!owned)
        issues.push({ loc: ['body', 'from_email'], msg: 'is not a sender address of this business', type: 'value_error' });
      return given;
    }
    if (!business.fromEmail)
      issues.push({ loc: ['body', 'from_email'], msg: 'The business has no sender address; give from_email', type: 'missing' });
    return business.fromEmail ?? '';
  }
  const given = (body as SmsBody).from_number;
  if (given) {
    const normalised = normalizePhone(given, business.country);
    if (!normalised) issues.push({ loc: ['body', 'from_number'], msg: 'is not a phone number', type: 'value_error' });
    else if (!(await ownsSmsNumber(business.id, normalised, tx))) {
      issues.push({ loc: ['body', 'from_number'], msg: 'is not an SMS number of this business', type: 'value_error' });
    }
    return normalised ?? '';
  }
  if (!defaultNumber)
    issues.push({ loc: ['body', 'from_number'], msg: 'The business has no SMS number; give from_number', type: 'missing' });
  return defaultNumber ?? '';
}

async function ownsSmsNumber(businessId: number, phone: string, tx: Tx): Promise<boolean> {
  const [row] = await tx
    .select({ id: businessSmsNumbers.id })
    .from(businessSmsNumbers)
    .where(and(eq(businessSmsNumbers.businessId, businessId), eq(businessSmsNumbers.phoneNumber, phone)))
    .limit(1);
  return row !== undefined;
}

async function ownsSenderAddress(businessId: number, address: string, tx: Tx): Promise<boolean> {
  const [row] = await tx
    .select({ id: businessEmailSenders.id })
    .from(businessEmailSenders)
    .where(and(eq(businessEmailSenders.businessId, businessId), sql`lower(${businessEmailSenders.email}) = ${address}`))
    .limit(1);
  return row !== undefined;
}

/**
 * Record mode cannot claim a provider id another business's message already has: status callbacks
 * and provider events find messages by that id, so a claimed id would capture another tenant's
 * events. 422 naming the item's field.
 */
async function refuseForeignProviderIds({
  tx,
  businessId,
  provider,
  fresh,
  issues,
}: {
  tx: Tx;
  businessId: number;
  provider: string | null;
  fresh: NewItem[];
  issues: ValidationIssue[];
}) {
  const given = fresh.flatMap(({ item, index }) =>
    'provider_message_id' in item && item.provider_message_id ? [{ id: item.provider_message_id, index }] : [],
  );
  if (given.length === 0) return;
  const taken = await tx
    .select({ id: messages.providerMessageId })
    .from(messages)
    .where(
      and(
        sql`${messages.provider} is not distinct from ${provider}`,
        equalsAny(
          messages.providerMessageId,
          given.map((g) => g.id),
          'text',
        ),
        sql`${messages.businessId} <> ${businessId}`,
      ),
    );
  const takenIds = new Set(taken.map((t) => t.id));
  for (const { id, index } of given) {
    if (takenIds.has(id)) {
      issues.push({
        loc: ['body', 'messages', index, 'provider_message_id'],
        msg: 'is already used by a message of another business',
        type: 'value_error',
      });
    }
  }
}
