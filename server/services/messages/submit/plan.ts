import { randomUUID } from 'node:crypto';
import { and, asc, eq, sql } from 'drizzle-orm';
import type { z } from 'zod';
import { db, type Tx } from '@/db/client';
import { equalsAny } from '@/db/sql-array';
import {
  businesses,
  businessEmailSenders,
  businessSmsNumbers,
  clients,
  messages,
  type MessageStatus,
  type QuietHoursWindow,
  type StoredAttachment,
} from '@/db/schema';
import { AppError, type ValidationIssue } from '@/server/errors';
import { enqueue } from '@/server/jobs/enqueue';
import { enqueueSends } from '@/server/services/messages/send-jobs';
import { QUEUES } from '@/server/jobs/queues';
import { normalizePhone } from '@/server/lib/phone';
import { MAX_ATTACHMENT_BYTES } from '@/server/shared/limits';
import { smsSegments } from '@/server/shared/sms-segments';
import { publish } from '@/server/services/live-events/publish';
import {
  type RecordEmailRequest,
  type RecordSmsRequest,
  type SendEmailRequest,
  type SendSmsRequest,
} from '@/server/schemas/messages';
import { defaultSmsNumber, staffMember } from '@/server/services/directory';
import { fileMessages } from '@/server/services/messages/insert';
import { configuredEmailProvider, configuredSmsProvider } from '@/server/services/messages/providers-config';
import { NO_MARKETING_CONSENT, OPTED_OUT, startNewAttempt } from '@/server/services/messages/lifecycle';
import { addressesWithMarketingWithdrawn, clientsWithMarketingConsent } from '@/server/services/compliance/consent';
import { needsMarketingConsent } from '@/server/shared/consent';
import { fillFromSavedReplies } from '@/server/services/messages/saved-reply-content';
import { suppressedAddresses, suppressionAddress } from '@/server/services/messages/suppression';
import { attachUploads, mmsAttachments } from '@/server/services/messages/uploads';
import { isStatusIn, RESENDABLE_STATUSES } from '@/server/shared/message-statuses';
import { heldByQuietHours } from '@/server/shared/quiet-hours';
import {
  holdUntil,
  lastInboundWithinADay,
  recipientWindow,
  sendingRules,
  type SendingRules,
} from '@/server/services/compliance/quiet-hours';

/**
 * Queue and record operations for SMS and email (docs/api.md#queue-mode, #record-mode). The whole request is
 * resolved and validated first (one 422 lists every bad item by index); then one transaction
 * creates leads and conversations, inserts every message under one request_id, updates the
 * conversations and enqueues one job per message to send. Nothing is stored or sent unless all of
 * it is.
 */

type Channel = 'sms' | 'email';
type Mode = 'send' | 'record';
type SmsBody = z.output<typeof SendSmsRequest> | z.output<typeof RecordSmsRequest>;
type EmailBody = z.output<typeof SendEmailRequest> | z.output<typeof RecordEmailRequest>;
type AnyItem = (SmsBody['messages'] | EmailBody['messages'])[number] & {
  direction?: 'inbound' | 'outbound';
  provider_message_id?: string;
};

export type SubmitResult = { success: true; message: string; request_id: string; message_ids: number[] };

type Planned = {
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

/**
 * `tx`: a caller already in a transaction passes it, and everything here runs on that one
 * connection (the writes in a savepoint). Never call these with `db` while holding a transaction
 * open: the pool could run out with every connection held by a caller waiting for another one.
 */
export async function submitSms(businessId: number, body: SmsBody, mode: Mode, tx: Tx = db, options: SubmitOptions = {}) {
  return submit(businessId, 'sms', body, mode, tx, options);
}

export async function submitEmail(businessId: number, body: EmailBody, mode: Mode, tx: Tx = db) {
  return submit(businessId, 'email', body, mode, tx);
}

async function submit(
  businessId: number,
  channel: Channel,
  body: SmsBody | EmailBody,
  mode: Mode,
  conn: Tx,
  options: SubmitOptions = {},
): Promise<SubmitResult> {
  const issues: ValidationIssue[] = [];
  // The reads that need only the business id go out together (one wait, not four: each is a
  // round trip of a bulk request's latency; on one transaction's connection they are pipelined).
  const [[business], staffFound, quiet, defaultNumber] = await Promise.all([
    conn.select().from(businesses).where(eq(businesses.id, businessId)).limit(1),
    body.staff_id !== undefined ? staffMember(businessId, body.staff_id, conn) : null,
    mode === 'send' && channel === 'sms' ? quietHoursFor(conn, businessId, body, options) : null,
    channel === 'sms' && !(body as SmsBody).from_number ? defaultSmsNumber(businessId, conn) : null,
  ]);
  if (!business) throw AppError.notFound('Business');

  // staff_id must be staff of this business, active or not (unlike requireStaff): record mode files
  // history, whose staff may have left since, and a send's staff_id only attributes a message an
  // API caller queues; the inbox sends as its session's staff member, active by resolveSession.
  if (body.staff_id !== undefined && !staffFound) {
    issues.push({ loc: ['body', 'staff_id'], msg: `Staff ${body.staff_id} not found in this business`, type: 'value_error' });
  }

  const from = await resolveSender(conn, business, channel, body, issues, defaultNumber);
  const items = body.messages as AnyItem[];

  // Re-queues of stored messages (send mode only; record mode ignores message_id).
  const requeueIds =
    mode === 'send' ? items.flatMap((it, index) => (it.message_id !== undefined ? [{ index, id: it.message_id }] : [])) : [];
  const stored = requeueIds.length
    ? await conn
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

  const sendAt = mode === 'send' ? ((body as { send_at?: Date }).send_at ?? null) : null;
  const fresh = items.flatMap((item, index) => (mode === 'record' || item.message_id === undefined ? [{ item, index }] : []));
  // docs/api.md#consent: a campaign, marketing or review request needs each client's marketing consent.
  const marketing = mode === 'send' && needsMarketingConsent(body.category, body.notification_type);
  const planned = await planNewMessages(conn, business, channel, mode, from, fresh, issues, marketing, sendAt, quiet);
  if (mode === 'send') await fillFromSavedReplies(conn, businessId, channel, body.staff_id ?? null, planned, issues);
  if (mode === 'record') await refuseForeignProviderIds(conn, businessId, body.provider ?? null, fresh, issues);
  // docs/api.md#mms: an SMS item's media_urls and uploaded media_ids, as its attachments.
  const mms = channel === 'sms' ? await mmsAttachments(conn, businessId, fresh, issues) : new Map<number, StoredAttachment[]>();

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

  const requestId = randomUUID();
  const ids = await conn
    .transaction(async (tx) => {
      return writeMessages(tx);
    })
    .catch((err: unknown) => {
      // drizzle wraps the driver's error: the constraint is named on its cause.
      const cause = (err as { cause?: { constraint_name?: string } }).cause ?? (err as { constraint_name?: string });
      if (cause.constraint_name === 'messages_provider_id_key') {
        throw new AppError('conflict', 'A message with this provider_message_id is already recorded');
      }
      throw err;
    });

  async function writeMessages(tx: Tx): Promise<number[]> {
    // docs/api.md#mms-uploads: an upload a message names is kept; marked with the messages that name it.
    await attachUploads(tx, businessId, mms);
    const leadIds = await createLeads(tx, businessId, planned);
    const clientIds = planned.map((p) => p.clientId ?? leadIds.get(leadKey(p.newLead!))!);
    const provider =
      mode === 'send' ? (channel === 'sms' ? configuredSmsProvider() : configuredEmailProvider()) : (body.provider ?? null);
    // A scheduled message sits in the timeline where it was written until it goes (the claim then
    // sets sent_at to when it went): a future sent_at would make it the conversation's latest
    // message ahead of anything the client writes meanwhile.
    const sentAt = body.sent_at ?? new Date();
    const cancelOnReply = (body as { cancel_on_reply?: boolean }).cancel_on_reply ?? true;

    const newRows = planned.map((p, i) =>
      messageRow(p, {
        businessId,
        channel,
        mode,
        body,
        requestId,
        provider,
        sentAt,
        cancelOnReply,
        mms: mms.get(p.index) ?? null,
        clientId: clientIds[i]!,
      }),
    );
    const rows = await fileMessages(tx, businessId, newRows);

    let requeued: { id: number; conversationId: number; attempts: number }[] = [];
    if (requeueIds.length) {
      requeued = await startNewAttempt(
        tx,
        businessId,
        requeueIds.map((r) => r.id),
        RESENDABLE_STATUSES,
        { requestId },
      );
      if (requeued.length !== new Set(requeueIds.map((r) => r.id)).size) {
        throw new AppError('conflict', 'A message to re-queue changed status meanwhile; nothing was queued');
      }
    }

    if (mode === 'send') {
      // A scheduled message's job starts after its send_at (the request's, or quiet hours' next
      // opening for its recipient), in the send-later queue (queues.ts); the claim checks send_at again.
      const sendAtOf = new Map(planned.map((p, i) => [rows[i]!.id, p.sendAt]));
      const later = rows.filter((r) => r.status === 'scheduled');
      // Each with the attempt it is queued for (a bulk chunk sends that attempt only).
      const now = [
        ...rows.flatMap((r, i) => (r.status === 'queued' ? [{ id: r.id, attempts: newRows[i]!.attempts ?? 0 }] : [])),
        ...requeued,
      ].map((r) => ({ id: r.id, businessId, channel, attempts: r.attempts }));
      const job = (r: { id: number }) => ({ data: { messageId: r.id, businessId }, startAt: sendAtOf.get(r.id) ?? undefined });
      if (later.length) await enqueue(tx, channel === 'sms' ? QUEUES.smsSendLater : QUEUES.emailSendLater, later.map(job));
      await enqueueSends(tx, now);
    }
    const conversationIds = [...rows, ...requeued].map((r) => r.conversationId);
    await publish(tx, { type: 'message.created', businessId, conversationIds, messageIds: rows.map((r) => r.id) });
    // Answer in item order: new rows were inserted in item order, re-queues keep their id.
    const newIds = rows.map((r) => r.id);
    const byIndex = new Map<number, number>();
    planned.forEach((p, i) => byIndex.set(p.index, newIds[i]!));
    requeueIds.forEach((r) => byIndex.set(r.index, r.id));
    return items.map((_, index) => byIndex.get(index)!);
  }

  const verb = mode === 'send' ? (sendAt ? `scheduled for ${sendAt.toISOString()}` : 'queued') : 'recorded';
  const held = planned.filter((p) => p.holdReason === 'quiet_hours').length;
  return {
    success: true,
    message: `${ids.length} ${channel === 'sms' ? 'SMS' : 'email'} message(s) ${verb}${held ? `; ${held} held for quiet hours until the recipient's sending window opens` : ''}`,
    request_id: requestId,
    message_ids: ids,
  };
}

/**
 * The sender of a request: `from_number` / `from_email` when given, else the business's default.
 * A given sender must be the business's own (one of its SMS numbers; its from_email or one of its
 * declared sender addresses), else 422: a business never sends as another one (replies, and a
 * STOP, would land at the other business).
 */
async function resolveSender(
  conn: Tx,
  business: typeof businesses.$inferSelect,
  channel: Channel,
  body: SmsBody | EmailBody,
  issues: ValidationIssue[],
  /** The business's default SMS number, read beforehand when no from_number is given. */
  defaultNumber: string | null,
): Promise<string> {
  if (channel === 'email') {
    const given = (body as EmailBody).from_email;
    if (given !== undefined) {
      const owned = given === business.fromEmail?.toLowerCase() || (await ownsSenderAddress(conn, business.id, given));
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
    else if (!(await ownsSmsNumber(conn, business.id, normalised))) {
      issues.push({ loc: ['body', 'from_number'], msg: 'is not an SMS number of this business', type: 'value_error' });
    }
    return normalised ?? '';
  }
  if (!defaultNumber)
    issues.push({ loc: ['body', 'from_number'], msg: 'The business has no SMS number; give from_number', type: 'missing' });
  return defaultNumber ?? '';
}

async function ownsSmsNumber(conn: Tx, businessId: number, phone: string): Promise<boolean> {
  const [row] = await conn
    .select({ id: businessSmsNumbers.id })
    .from(businessSmsNumbers)
    .where(and(eq(businessSmsNumbers.businessId, businessId), eq(businessSmsNumbers.phoneNumber, phone)))
    .limit(1);
  return row !== undefined;
}

async function ownsSenderAddress(conn: Tx, businessId: number, address: string): Promise<boolean> {
  const [row] = await conn
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
async function refuseForeignProviderIds(
  conn: Tx,
  businessId: number,
  provider: string | null,
  fresh: { item: AnyItem; index: number }[],
  issues: ValidationIssue[],
) {
  const given = fresh.flatMap(({ item, index }) =>
    'provider_message_id' in item && item.provider_message_id ? [{ id: item.provider_message_id, index }] : [],
  );
  if (given.length === 0) return;
  const taken = await conn
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

/** Bytes a base64 attachment decodes to (line breaks and padding are not data). */
const decodedSize = (base64: string) => Buffer.from(base64, 'base64').length;

/** What planning a message needs of its client. */
const CLIENT_COLUMNS = {
  id: clients.id,
  phoneNumber: clients.phoneNumber,
  email: clients.email,
  timezone: clients.timezone,
  locationId: clients.locationId,
};
type ClientRow = Pick<typeof clients.$inferSelect, keyof typeof CLIENT_COLUMNS>;

const leadKey = (lead: { phone?: string; email?: string }) => lead.phone ?? `email:${lead.email}`;

/** Resolves every new item's client and destination with two queries, collecting 422s. */
async function planNewMessages(
  conn: Tx,
  business: typeof businesses.$inferSelect,
  channel: Channel,
  mode: Mode,
  from: string,
  fresh: { item: AnyItem; index: number }[],
  issues: ValidationIssue[],
  marketing: boolean,
  sendAt: Date | null,
  quiet: QuietHoursPlan | null,
): Promise<Planned[]> {
  const loc = (index: number, field: string) => ['body', 'messages', index, field] as ValidationIssue['loc'];
  const clientIds = [...new Set(fresh.flatMap(({ item }) => (item.client_id !== undefined ? [item.client_id] : [])))];
  const phones = new Map<number, string>();
  const emails = new Map<number, string>();
  for (const { item, index } of fresh) {
    if (channel === 'sms' && 'to_number' in item && item.to_number !== undefined) {
      const phone = normalizePhone(item.to_number, business.country);
      if (phone) phones.set(index, phone);
      else issues.push({ loc: loc(index, 'to_number'), msg: 'is not a phone number', type: 'value_error' });
    }
    if (channel === 'email' && 'to_email' in item && item.to_email !== undefined) emails.set(index, item.to_email);
    if (channel === 'email' && 'attachments' in item) {
      item.attachments?.forEach((a, ai) => {
        if (a.content && decodedSize(a.content) > MAX_ATTACHMENT_BYTES) {
          throw new AppError('payload_too_large', `messages[${index}].attachments[${ai}] is over 5 MiB`);
        }
      });
    }
  }

  const known = new Map<number, ClientRow>();
  if (clientIds.length) {
    const rows = await conn
      .select(CLIENT_COLUMNS)
      .from(clients)
      .where(and(eq(clients.businessId, business.id), equalsAny(clients.id, clientIds, 'int')));
    rows.forEach((c) => known.set(c.id, c));
  }
  // Clients found by destination (oldest first wins when several share a phone or address).
  const byPhone = new Map<string, ClientRow>();
  const byEmail = new Map<string, ClientRow>();
  const lookupPhones = [...new Set([...phones.values()])];
  const lookupEmails = [...new Set([...emails.values()])];
  if (lookupPhones.length) {
    const rows = await conn
      .select(CLIENT_COLUMNS)
      .from(clients)
      .where(and(eq(clients.businessId, business.id), equalsAny(clients.phoneNumber, lookupPhones, 'text')))
      .orderBy(asc(clients.id));
    for (const c of rows) if (!byPhone.has(c.phoneNumber!)) byPhone.set(c.phoneNumber!, c);
  }
  if (lookupEmails.length) {
    const rows = await conn
      .select(CLIENT_COLUMNS)
      .from(clients)
      .where(and(eq(clients.businessId, business.id), equalsAny(sql`lower(${clients.email})`, lookupEmails, 'text')))
      .orderBy(asc(clients.id));
    for (const c of rows) if (!byEmail.has(c.email!.toLowerCase())) byEmail.set(c.email!.toLowerCase(), c);
  }

  const [suppressed, consenting, withdrawn] = await Promise.all([
    // Opt-outs go by the recipient's address, whichever client row carries it: one query for every
    // address this request can send to (the given destinations and the named clients').
    mode === 'send'
      ? suppressedAddresses(conn, business.id, channel, [
          ...(channel === 'sms' ? lookupPhones : lookupEmails),
          ...[...known.values()].flatMap((c) => {
            const own = channel === 'sms' ? c.phoneNumber : c.email?.toLowerCase();
            return own ? [own] : [];
          }),
        ])
      : new Set<string>(),
    // Marketing consent is the recipient client's (a new lead has none): one query for the clients known so far.
    marketing
      ? clientsWithMarketingConsent(conn, business.id, channel, [
          ...known.keys(),
          ...[...byPhone.values(), ...byEmail.values()].map((c) => c.id),
        ])
      : new Set<number>(),
    // ...and no client of the business with the destination address has withdrawn it (docs/api.md#consent).
    marketing
      ? addressesWithMarketingWithdrawn(conn, business.id, channel, [
          ...(channel === 'sms' ? lookupPhones : lookupEmails),
          ...[...known.values()].flatMap((c) => {
            const own = channel === 'sms' ? c.phoneNumber : c.email?.toLowerCase();
            return own ? [own] : [];
          }),
        ])
      : new Set<string>(),
  ]);

  // When each recipient's window next opens: the same for every recipient with the same window
  // (a request's recipients share a few time zones), and reading a zone's clock is the costly part.
  const openings = new Map<string, Date>();
  const openingOf = (window: QuietHoursWindow, at: Date) => {
    const key = `${window.time_zone} ${window.start} ${window.end}`;
    let opening = openings.get(key);
    if (opening === undefined) openings.set(key, (opening = holdUntil(window, at)));
    return opening;
  };

  const planned: Planned[] = [];
  for (const { item, index } of fresh) {
    let client: ClientRow | undefined;
    if (item.client_id !== undefined) {
      client = known.get(item.client_id);
      if (!client) {
        issues.push({
          loc: loc(index, 'client_id'),
          msg: `Client ${item.client_id} not found in this business`,
          type: 'value_error',
        });
        continue;
      }
    }
    const givenTo = channel === 'sms' ? phones.get(index) : emails.get(index);
    // docs/api.md#recipients: a send to a named client goes to that client's own address. Another
    // address with it would be sent on the named client's opt-outs, consent and quiet hours, and
    // filed in their conversation. Record mode files history as given (the number may have changed since).
    if (mode === 'send' && client && givenTo !== undefined) {
      const own = channel === 'sms' ? client.phoneNumber : (client.email?.toLowerCase() ?? null);
      if (own !== givenTo) {
        const field = channel === 'sms' ? 'to_number' : 'to_email';
        issues.push({
          loc: loc(index, field),
          msg: `is not the ${channel === 'sms' ? 'phone number' : 'email address'} of client ${client.id}; give ${field} alone to send elsewhere`,
          type: 'value_error',
        });
        continue;
      }
    }
    // docs/api.md#consent: a marketing email goes to its client alone; a copy would reach addresses
    // whose consent nobody asked.
    const copies = (['cc_email', 'bcc_email'] as const).find(
      (f) => f in item && ((item as Record<typeof f, unknown[] | undefined>)[f]?.length ?? 0) > 0,
    );
    if (marketing && copies) {
      issues.push({
        loc: loc(index, copies),
        msg: 'A campaign, marketing email or review request goes to its client alone: cc and bcc are not allowed',
        type: 'value_error',
      });
      continue;
    }
    if (!client && givenTo) client = channel === 'sms' ? byPhone.get(givenTo) : byEmail.get(givenTo);
    const to = givenTo ?? (channel === 'sms' ? client?.phoneNumber : client?.email?.toLowerCase()) ?? null;
    if (!to) {
      if (!issues.some((i) => i.loc[2] === index)) {
        issues.push({
          loc: loc(index, 'client_id'),
          msg: `Client has no ${channel === 'sms' ? 'phone number' : 'email address'}`,
          type: 'value_error',
        });
      }
      continue;
    }
    const inbound = mode === 'record' && item.direction === 'inbound';
    // docs/api.md#quiet-hours: a text held by quiet hours keeps to its recipient's window; queued
    // (or scheduled) while that window is closed, it is scheduled for the next opening instead.
    const window = quiet ? windowOf(quiet.rules, client, to) : null;
    const at = sendAt ?? quiet?.now ?? null;
    const opening = window && at ? openingOf(window, at) : null;
    const held = opening !== null && opening.getTime() > at!.getTime();
    const optedOut = mode === 'send' && suppressed.has(suppressionAddress(channel, to));
    const refusal = optedOut
      ? { code: OPTED_OUT.code, reason: OPTED_OUT.reason[channel] }
      : marketing && !(client && consenting.has(client.id) && !withdrawn.has(to))
        ? { code: NO_MARKETING_CONSENT.code, reason: NO_MARKETING_CONSENT.reason[channel] }
        : null;
    const status: MessageStatus =
      // docs/api.md#record-mode: inbound messages are `received` and stay so, whatever the item says.
      mode === 'send'
        ? refusal
          ? 'failed'
          : sendAt || held
            ? 'scheduled'
            : 'queued'
        : inbound
          ? 'received'
          : (item.status ?? 'sent');
    planned.push({
      index,
      clientId: client?.id ?? null,
      newLead: client ? null : channel === 'sms' ? { phone: to } : { email: to },
      to: inbound ? from : to,
      from: inbound ? to : from,
      // A saved reply's item gets its text once resolved (fillFromSavedReplies).
      content: item.message ?? '',
      subject: 'subject' in item ? (item.subject ?? null) : null,
      status,
      direction: inbound ? 'inbound' : 'outbound',
      errorCode: refusal?.code ?? null,
      errorMessage: refusal?.reason ?? null,
      sendAt: held && status === 'scheduled' ? opening : sendAt,
      quietHours: window,
      holdReason: held && status === 'scheduled' ? 'quiet_hours' : null,
      item,
    });
  }
  return planned;
}

type QuietHoursPlan = { rules: SendingRules; now: Date };

/** Whether this request's texts keep to quiet hours (SubmitOptions); null when they go regardless. */
async function quietHoursFor(conn: Tx, businessId: number, body: SmsBody | EmailBody, options: SubmitOptions) {
  const now = new Date();
  if (options.staffReply) {
    if (options.staffReply.sendNow) return null;
    if (await lastInboundWithinADay(businessId, options.staffReply.conversationId, now, conn)) return null;
  } else if (
    !heldByQuietHours(body.category, body.notification_type) ||
    (body as { override_quiet_hours?: boolean }).override_quiet_hours
  ) {
    return null;
  }
  return { rules: await sendingRules(businessId, conn), now };
}

/** The recipient's window without where its clock came from (what the message stores). */
function windowOf(rules: SendingRules, client: ClientRow | undefined, phone: string): QuietHoursWindow {
  const { time_zone, start, end } = recipientWindow(rules, {
    timeZone: client?.timezone ?? null,
    phoneNumber: phone,
    locationId: client?.locationId ?? null,
  });
  return { time_zone, start, end };
}

/**
 * New destinations become `lead` clients. A transaction-scoped advisory lock per destination
 * (taken in sorted order, so two requests cannot deadlock) keeps concurrent requests from creating
 * the same lead twice.
 */
async function createLeads(tx: Tx, businessId: number, planned: Planned[]): Promise<Map<string, number>> {
  const leads = new Map<string, { phone?: string; email?: string }>();
  for (const p of planned) if (p.newLead) leads.set(leadKey(p.newLead), p.newLead);
  const result = new Map<string, number>();
  if (leads.size === 0) return result;
  const keys = [...leads.keys()].sort();
  await tx.execute(
    sql`select pg_advisory_xact_lock(${businessId}, hashtext(k)) from unnest(${sql.param(keys)}::text[]) k order by k`,
  );
  const phones = [...leads.values()].flatMap((l) => (l.phone ? [l.phone] : []));
  const emails = [...leads.values()].flatMap((l) => (l.email ? [l.email] : []));
  // Someone may have created them while we waited for the locks.
  const existing = await tx
    .select({ id: clients.id, phone: clients.phoneNumber, email: clients.email })
    .from(clients)
    .where(
      and(
        eq(clients.businessId, businessId),
        sql`(${clients.phoneNumber} = any(${sql.param(phones)}::text[]) or lower(${clients.email}) = any(${sql.param(emails)}::text[]))`,
      ),
    )
    .orderBy(asc(clients.id));
  for (const c of existing) {
    const key =
      c.phone && leads.has(c.phone)
        ? c.phone
        : c.email && leads.has(`email:${c.email.toLowerCase()}`)
          ? `email:${c.email.toLowerCase()}`
          : null;
    if (key && !result.has(key)) result.set(key, c.id);
  }
  const missing = keys.filter((k) => !result.has(k));
  if (missing.length) {
    const inserted = await tx
      .insert(clients)
      .values(
        missing.map((k) => ({
          businessId,
          phoneNumber: leads.get(k)!.phone ?? null,
          email: leads.get(k)!.email ?? null,
          clientType: 'lead' as const,
        })),
      )
      .returning({ id: clients.id, phone: clients.phoneNumber, email: clients.email });
    for (const c of inserted) result.set(c.phone ?? `email:${c.email}`, c.id);
  }
  return result;
}

function messageRow(
  p: Planned,
  ctx: {
    businessId: number;
    channel: Channel;
    mode: Mode;
    body: SmsBody | EmailBody;
    requestId: string;
    provider: (typeof messages.$inferInsert)['provider'];
    sentAt: Date;
    cancelOnReply: boolean;
    mms: StoredAttachment[] | null;
    clientId: number;
  },
): Omit<typeof messages.$inferInsert, 'conversationId'> & { clientId: number; sentAt: Date } {
  const { body, channel } = ctx;
  const inbound = p.direction === 'inbound';
  const segments = channel === 'sms' ? smsSegments(p.content) : null;
  const item = p.item as AnyItem &
    Partial<{
      cc_email: string[];
      bcc_email: string[];
      attachments: { filename: string; content_type?: string; content?: string; url?: string }[];
      html: string;
    }>;
  return {
    businessId: ctx.businessId,
    clientId: ctx.clientId,
    channel,
    direction: p.direction,
    messageType: channel === 'sms' ? 'TEXT' : 'EMAIL',
    category: body.category,
    notificationType: body.notification_type ?? null,
    senderType: inbound ? 'client' : body.sender_type,
    senderId: inbound ? ctx.clientId : (body.staff_id ?? body.sent_by ?? null),
    receiverType: inbound ? 'staff' : 'client',
    receiverId: inbound ? (body.staff_id ?? null) : ctx.clientId,
    staffId: body.staff_id ?? null,
    sentBy: body.sent_by ?? null,
    wlUserId: item.wl_user_id ?? null,
    content: p.content,
    subject: p.subject,
    fromAddress: p.from,
    toAddress: p.to,
    cc: item.cc_email ?? null,
    bcc: item.bcc_email ?? null,
    attachments:
      item.attachments?.map((a): StoredAttachment => ({
        filename: a.filename,
        content_type: a.content_type ?? null,
        url: a.url ?? null,
        size: a.content ? decodedSize(a.content) : null,
        content: a.content,
      })) ?? ctx.mms,
    providerMetadata: { ...(item.provider_metadata ?? {}), ...(item.html ? { html: item.html } : {}) },
    status: p.status,
    // docs/api.md#record-mode: a recorded message is never claimed by a send worker nor swept.
    origin: ctx.mode === 'record' ? 'record' : 'send',
    provider: ctx.provider,
    providerMessageId: ctx.mode === 'record' ? (item.provider_message_id ?? null) : null,
    requestId: ctx.requestId,
    isRead: !inbound,
    errorCode: p.errorCode,
    errorMessage: p.errorMessage,
    attempts: ctx.mode === 'send' && (p.status === 'queued' || p.status === 'scheduled') ? 1 : 0,
    segments: segments?.segments ?? null,
    encoding: segments?.encoding ?? null,
    sentAt: ctx.sentAt,
    sendAt: p.sendAt,
    cancelOnReply: ctx.cancelOnReply,
    quietHours: p.quietHours,
    holdReason: p.holdReason,
  };
}
