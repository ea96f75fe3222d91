import { and, asc, eq, sql } from 'drizzle-orm';
import type { Tx } from '@/server/db/client';
import { clients, messages, type StoredAttachment } from '@/db/schema';
import { AppError } from '@/server/errors';
import { enqueue } from '@/server/jobs/enqueue';
import { QUEUES } from '@/server/jobs/queues';
import { smsSegments } from '@/server/shared/sms-segments';
import { fileMessages } from '@/server/services/messages/insert';
import { configuredEmailProvider, configuredSmsProvider } from '@/server/services/messages/providers-config';
import { startNewAttempt } from '@/server/services/messages/lifecycle';
import { enqueueSends } from '@/server/services/messages/send-jobs';
import { attachUploads } from '@/server/services/messages/uploads';
import { RESENDABLE_STATUSES } from '@/server/shared/message-statuses';
import { assertNoCollision } from './collision';
import { decodedSize } from './plan';
import type { AnyItem, Channel, EmailBody, Mode, Planned, SmsBody } from './types';
import type { Requeue } from './validate';

/**
 * The write stage of a submission, once it is planned and valid: one transaction creates leads and
 * conversations, inserts every message under one request_id, updates the conversations, enqueues
 * one job per message to send and publishes them. Nothing is stored or sent unless all of it is.
 */

export type WriteOptions = {
  /** The caller's connection: the writes run in a transaction (a savepoint when it is one). */
  tx: Tx;
  businessId: number;
  channel: Channel;
  mode: Mode;
  body: SmsBody | EmailBody;
  requestId: string;
  /** Every item of the request, in order: the answer has one message id for each. */
  items: AnyItem[];
  planned: Planned[];
  requeueIds: Requeue[];
  /** Each SMS item's MMS attachments, by item index (validateItems). */
  mms: Map<number, StoredAttachment[]>;
};

/** Writes the submission; answers its message ids in item order. */
export async function writeSubmission({ tx, ...options }: WriteOptions): Promise<number[]> {
  return tx
    .transaction(async (tx) => {
      return writeMessages({ ...options, tx });
    })
    .catch((err: unknown) => {
      // drizzle wraps the driver's error: the constraint is named on its cause.
      const cause = (err as { cause?: { constraint_name?: string } }).cause ?? (err as { constraint_name?: string });
      if (cause.constraint_name === 'messages_provider_id_key') {
        throw new AppError('conflict', 'A message with this provider_message_id is already recorded');
      }
      throw err;
    });
}

async function writeMessages({
  tx,
  businessId,
  channel,
  mode,
  body,
  requestId,
  items,
  planned,
  requeueIds,
  mms,
}: Omit<WriteOptions, 'tx'> & { tx: Tx }): Promise<number[]> {
  // docs/api.md#collision-guard: first, so the conversations are locked before anything is written.
  const lastSeen = mode === 'send' ? (body as { last_seen_message_id?: number }).last_seen_message_id : undefined;
  if (lastSeen !== undefined) {
    const clientIds = planned.flatMap((p) => (p.clientId === null ? [] : [p.clientId]));
    await assertNoCollision(businessId, clientIds, lastSeen, body.staff_id ?? null, tx);
  }
  // docs/api.md#mms-uploads: an upload a message names is kept; marked with the messages that name it.
  await attachUploads(businessId, mms, tx);
  const leadIds = await createLeads(businessId, planned, tx);
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
  const rows = await fileMessages(businessId, newRows, tx);

  let requeued: { id: number; conversationId: number; attempts: number }[] = [];
  if (requeueIds.length) {
    requeued = await startNewAttempt(
      businessId,
      requeueIds.map((r) => r.id),
      RESENDABLE_STATUSES,
      { requestId },
      tx,
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
    await enqueueSends(now, tx);
  }
  // Answer in item order: new rows were inserted in item order, re-queues keep their id.
  const newIds = rows.map((r) => r.id);
  const byIndex = new Map<number, number>();
  planned.forEach((p, i) => byIndex.set(p.index, newIds[i]!));
  requeueIds.forEach((r) => byIndex.set(r.index, r.id));
  return items.map((_, index) => byIndex.get(index)!);
}

const leadKey = (lead: { phone?: string; email?: string }) => lead.phone ?? `email:${lead.email}`;

/**
 * New destinations become `lead` clients. A transaction-scoped advisory lock per destination
 * (taken in sorted order, so two requests cannot deadlock) keeps concurrent requests from creating
 * the same lead twice.
 */
async function createLeads(businessId: number, planned: Planned[], tx: Tx): Promise<Map<string, number>> {
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
