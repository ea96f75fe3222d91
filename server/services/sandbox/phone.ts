import { randomUUID } from 'node:crypto';
import { and, asc, desc, eq, isNotNull, sql, type SQL } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { businessEmailSenders, businesses, clients, messages, staff } from '@/db/schema';
import { env, type Env } from '@/server/env';
import { AppError } from '@/server/errors';
import { sanitizeEmailHtml } from '@/server/lib/email-html';
import { MAX_ATTACHMENT_BYTES } from '@/server/shared/limits';
import { smsSegments } from '@/server/shared/sms-segments';
import {
  inboundEmailPath,
  inboundParseForm,
  multipartBody,
  TWILIO_WEBHOOK_PATHS,
  twilioSid,
  twilioWebhookRequest,
} from '@/server/providers/webhook-requests';
import { businessCountry, defaultSmsNumber } from '@/server/services/directory';
import { clientMatches, clientSearchTerm } from '@/server/services/search';
import { attachmentsWithoutBytes } from '@/server/services/messages/serialize';
import { clientOptedOutColumns, suppressedSql } from '@/server/services/messages/suppression';

/**
 * The /sandbox page (docs/api.md#sandbox): each client's phone (their SMS thread) and mailbox, and replies
 * written as the client. A reply is the exact webhook the provider would send (a Twilio-signed
 * form POST, a SendGrid Inbound Parse multipart POST), sent over HTTP to this service's own public
 * endpoint, so it travels the production path: signature check, raw event, dedupe, processing,
 * NOTIFY to open inboxes.
 *
 * Available only while both sandbox providers are in use (no Twilio, no SMTP configured), and in
 * production only with SANDBOX_ENABLED=true (the e2e server, a demo): otherwise the page does not
 * exist, and nothing here will sign a webhook.
 */

export function sandboxEnabled(config: Env = env()): boolean {
  return config.sandboxAllowed && config.smsProvider === 'sandbox' && config.emailProvider === 'sandbox';
}

function assertSandboxEnabled(): void {
  if (!sandboxEnabled())
    throw new AppError('not_found', 'The sandbox exists only while the sandbox SMS and email providers are in use');
}

/* ----------------------------------------------------------------------------------------------
 * Reading: clients, a client's phone and mailbox
 * -------------------------------------------------------------------------------------------- */

type SandboxClientQuery = { search?: string; page: number; pageSize: number };

/**
 * What reached, or is on its way to, the client: never an internal note (staff only), nor a text or
 * email still waiting to go (`scheduled`) or canceled before it went. The client's phone and mailbox
 * show only these, and the client list previews the latest of them. `m`: the messages table's name in the query.
 */
const clientVisible = (m: SQL = sql`messages`) =>
  sql`${m}.message_type <> 'NOTE' and ${m}.status not in ('scheduled', 'canceled')`;

/** The business's clients, most recent conversation activity first; search by name, phone or email. */
export async function listSandboxClients(businessId: number, q: SandboxClientQuery, tx: Tx = db) {
  const where: SQL[] = [sql`cl.business_id = ${businessId}`];
  const term = q.search?.trim();
  if (term) where.push(clientMatches('cl', businessId, clientSearchTerm(term, await businessCountry(businessId, tx))));
  const cond = sql.join(where, sql` and `);
  const [rows, [total]] = await Promise.all([
    tx.execute<{
      id: number;
      name: string | null;
      phone_number: string | null;
      email: string | null;
      opted_out_sms: boolean;
      opted_out_email: boolean;
      conversation_id: number | null;
      last_message_content: string | null;
      last_channel: string | null;
      last_activity_at: Date | string | null;
    }>(sql`
      select cl.id, cl.name, cl.phone_number, cl.email, ${clientOptedOutColumns('cl')},
        c.id as conversation_id, v.content as last_message_content, v.channel as last_channel, c.last_activity_at
      from clients cl left join conversations c on c.client_id = cl.id and c.business_id = cl.business_id
      -- The latest message the client can see (clientVisible), not the conversation's latest,
      -- which may be a note or a text still waiting.
      left join lateral (
        select m.content, m.channel from messages m
        where m.business_id = cl.business_id and m.conversation_id = c.id and ${clientVisible(sql`m`)}
        order by m.sent_at desc, m.id desc limit 1
      ) v on true
      where ${cond}
      order by c.last_activity_at desc nulls last, cl.name nulls last, cl.id
      limit ${q.pageSize} offset ${(q.page - 1) * q.pageSize}`),
    tx.execute<{ n: number }>(sql`select count(*)::int as n from clients cl where ${cond}`),
  ]);
  return {
    clients: rows.map((r) => ({
      clientId: r.id,
      name: r.name,
      phone: r.phone_number,
      email: r.email,
      optedOutSms: r.opted_out_sms,
      optedOutEmail: r.opted_out_email,
      conversationId: r.conversation_id,
      lastMessage: r.last_message_content,
      lastChannel: r.last_channel,
      lastActivityAt: r.last_activity_at === null ? null : new Date(r.last_activity_at),
    })),
    total: total!.n,
    page: q.page,
    pageSize: q.pageSize,
    nextPage: q.page * q.pageSize < total!.n,
  };
}

async function loadClient(businessId: number, clientId: number, tx: Tx = db) {
  const [client] = await tx
    .select({
      id: clients.id,
      name: clients.name,
      phone: clients.phoneNumber,
      email: clients.email,
      optedOutSms: sql<boolean>`${suppressedSql('sms', sql`${clients.businessId}`, sql`${clients.phoneNumber}`)}`,
      optedOutEmail: sql<boolean>`${suppressedSql('email', sql`${clients.businessId}`, sql`${clients.email}`)}`,
    })
    .from(clients)
    .where(and(eq(clients.businessId, businessId), eq(clients.id, clientId)));
  if (!client) throw AppError.notFound('Client');
  return client;
}

const attachmentsOf = (a: (typeof messages.$inferSelect)['attachments']) =>
  a?.map(({ filename, content_type, url, size }) => ({ filename, contentType: content_type, url, size })) ?? [];

const THREAD_LIMIT = 200;

/** A client's phone: their SMS with the business that reached it, both directions, newest last (the latest 200). */
export async function sandboxPhone(businessId: number, clientId: number, tx: Tx = db) {
  const client = await loadClient(businessId, clientId, tx);
  const [businessNumber, rows] = await Promise.all([
    // The number the business texts from: the one the client texts back.
    defaultSmsNumber(businessId, tx),
    tx
      .select({
        id: messages.id,
        direction: messages.direction,
        content: messages.content,
        status: messages.status,
        errorCode: messages.errorCode,
        errorMessage: messages.errorMessage,
        fromAddress: messages.fromAddress,
        toAddress: messages.toAddress,
        attachments: attachmentsWithoutBytes,
        segments: messages.segments,
        sentAt: messages.sentAt,
        staffName: staff.name,
      })
      .from(messages)
      .leftJoin(staff, eq(staff.id, messages.staffId))
      .where(
        and(eq(messages.businessId, businessId), eq(messages.clientId, clientId), eq(messages.channel, 'sms'), clientVisible()),
      )
      .orderBy(desc(messages.sentAt), desc(messages.id))
      .limit(THREAD_LIMIT),
  ]);
  return {
    client,
    businessNumber,
    messages: rows.reverse().map((m) => ({ ...m, attachments: attachmentsOf(m.attachments) })),
  };
}

const MAILBOX_LIMIT = 100;

/**
 * A client's mailbox: their emails with the business, both directions, newest first (the latest
 * 100). HTML is sanitized like the inbox's (server/lib/email-html.ts), remote images withheld: the
 * page shows it in a script-less frame, but nothing hostile should reach the browser at all.
 */
export async function sandboxMailbox(businessId: number, clientId: number, tx: Tx = db) {
  const client = await loadClient(businessId, clientId, tx);
  const [address, rows] = await Promise.all([
    businessMailAddress(businessId, clientId, undefined, tx),
    tx
      .select({
        id: messages.id,
        direction: messages.direction,
        subject: messages.subject,
        text: messages.content,
        html: sql<string | null>`${messages.providerMetadata}->>'html'`,
        from: messages.fromAddress,
        to: messages.toAddress,
        cc: messages.cc,
        status: messages.status,
        errorCode: messages.errorCode,
        errorMessage: messages.errorMessage,
        emailMessageId: messages.emailMessageId,
        inReplyTo: messages.inReplyTo,
        attachments: attachmentsWithoutBytes,
        sentAt: messages.sentAt,
        staffName: staff.name,
      })
      .from(messages)
      .leftJoin(staff, eq(staff.id, messages.staffId))
      .where(
        and(eq(messages.businessId, businessId), eq(messages.clientId, clientId), eq(messages.channel, 'email'), clientVisible()),
      )
      .orderBy(desc(messages.sentAt), desc(messages.id))
      .limit(MAILBOX_LIMIT),
  ]);
  return {
    client,
    businessAddress: address,
    emails: rows.map((m) => ({
      ...m,
      html: m.html ? sanitizeEmailHtml(m.html, { allowRemoteImages: false }).html : null,
      attachments: attachmentsOf(m.attachments),
    })),
  };
}

/** The last email the business sent this client (that a reply can thread to), or a given one. */
async function emailToAnswer(businessId: number, clientId: number, messageId?: number, tx: Tx = db) {
  const [row] = await tx
    .select({
      id: messages.id,
      subject: messages.subject,
      from: messages.fromAddress,
      emailMessageId: messages.emailMessageId,
      inReplyTo: messages.inReplyTo,
    })
    .from(messages)
    .where(
      and(
        eq(messages.businessId, businessId),
        eq(messages.clientId, clientId),
        eq(messages.channel, 'email'),
        eq(messages.direction, 'outbound'),
        isNotNull(messages.emailMessageId),
        messageId === undefined ? undefined : eq(messages.id, messageId),
      ),
    )
    .orderBy(desc(messages.sentAt), desc(messages.id))
    .limit(1);
  if (!row && messageId !== undefined)
    throw AppError.invalid(['body', 'reply_to_message_id'], `Message ${messageId} is not an email sent to this client`);
  return row ?? null;
}

/**
 * Where the client writes to: the address the business last wrote from, when it still receives
 * mail for this business, else its sender address (`from_email`), else a registered sender.
 */
async function businessMailAddress(
  businessId: number,
  clientId: number,
  preferred?: string | null,
  tx: Tx = db,
): Promise<string | null> {
  const last = preferred === undefined ? (await emailToAnswer(businessId, clientId, undefined, tx))?.from : preferred;
  const [business] = await tx.select({ fromEmail: businesses.fromEmail }).from(businesses).where(eq(businesses.id, businessId));
  const senders = await tx
    .select({ email: businessEmailSenders.email })
    .from(businessEmailSenders)
    .where(eq(businessEmailSenders.businessId, businessId))
    .orderBy(desc(businessEmailSenders.isDefault), asc(businessEmailSenders.id));
  const receiving = [...senders.map((s) => s.email), ...(business?.fromEmail ? [business.fromEmail] : [])];
  const lower = (v: string) => v.toLowerCase();
  if (last && receiving.some((a) => lower(a) === lower(last))) return last;
  return business?.fromEmail ?? senders[0]?.email ?? null;
}

/* ----------------------------------------------------------------------------------------------
 * Writing as the client: the provider's webhook, over HTTP, to our own endpoint
 * -------------------------------------------------------------------------------------------- */

type SmsReply = { channel: 'sms'; clientId: number; body: string };
type EmailReply = {
  channel: 'email';
  clientId: number;
  /** Default: "Re: " + the subject of the email answered. */
  subject?: string;
  text: string;
  html?: string | null;
  attachment?: { filename: string; contentType: string; contentBase64: string } | null;
  /** The email of ours being answered (In-Reply-To); default the last one we sent this client. */
  replyToMessageId?: number;
};

type ReplyOptions = {
  /** Where the request goes (default PUBLIC_BASE_URL). Signatures are always over PUBLIC_BASE_URL, as the handlers verify. */
  targetBaseUrl?: string;
  /** Sign with this Twilio token / use this inbound secret instead of the configured one (tests: a wrong one must be refused). */
  twilioAuthToken?: string;
  inboundSecret?: string;
  timeoutMs?: number;
};

type ReplyResult = {
  channel: 'sms' | 'email';
  /** MessageSid / Message-ID of the posted webhook. */
  providerId: string;
  /** The stored inbound message, once processed (null when the endpoint stored the event but did not make a message of it). */
  messageId: number | null;
  conversationId: number | null;
};

export async function replyAsClient(
  businessId: number,
  reply: SmsReply | EmailReply,
  options: ReplyOptions = {},
  tx: Tx = db,
): Promise<ReplyResult> {
  assertSandboxEnabled();
  return reply.channel === 'sms' ? replySms(businessId, reply, options, tx) : replyEmail(businessId, reply, options, tx);
}

async function replySms(businessId: number, reply: SmsReply, options: ReplyOptions, tx: Tx = db): Promise<ReplyResult> {
  const config = env();
  const client = await loadClient(businessId, reply.clientId, tx);
  if (!client.phone) throw AppError.invalid(['body', 'client_id'], 'This client has no phone number');
  const to = await defaultSmsNumber(businessId, tx);
  if (!to) throw new AppError('bad_request', 'This business has no SMS number, so the client has nothing to text');
  const token = options.twilioAuthToken ?? config.twilio.authToken;
  if (!token) throw new AppError('not_configured', 'No Twilio auth token to sign the webhook with');

  const sid = twilioSid('SM');
  const body = reply.body;
  // What Twilio posts for an inbound SMS (docs/providers.md#twilio-inbound-sms), minus the best-effort geo fields.
  const params: Record<string, string> = {
    ToCountry: 'US',
    SmsMessageSid: sid,
    NumMedia: '0',
    SmsSid: sid,
    SmsStatus: 'received',
    Body: body,
    To: to,
    NumSegments: String(smsSegments(body).segments),
    MessageSid: sid,
    AccountSid: config.twilio.accountSid ?? `AC${'0'.repeat(32)}`,
    From: client.phone,
    ApiVersion: '2010-04-01',
  };
  const path = TWILIO_WEBHOOK_PATHS.smsIncoming;
  const request = twilioWebhookRequest(`${config.publicBaseUrl}${path}`, params, token);
  await post(`${options.targetBaseUrl ?? config.publicBaseUrl}${path}`, request.headers, request.body, options, 'SMS');

  const [stored] = await tx
    .select({ id: messages.id, conversationId: messages.conversationId })
    .from(messages)
    .where(and(eq(messages.provider, 'twilio'), eq(messages.providerMessageId, sid), eq(messages.businessId, businessId)));
  return { channel: 'sms', providerId: sid, messageId: stored?.id ?? null, conversationId: stored?.conversationId ?? null };
}

/** `"Name" <address>` with the name's quotes and backslashes escaped; the bare address without a name. */
function mailbox(name: string | null, address: string): string {
  const clean = name?.replace(/[\r\n]+/g, ' ').trim();
  return clean ? `"${clean.replace(/(["\\])/g, '\\$1')}" <${address}>` : address;
}

async function replyEmail(businessId: number, reply: EmailReply, options: ReplyOptions, tx: Tx = db): Promise<ReplyResult> {
  const config = env();
  const client = await loadClient(businessId, reply.clientId, tx);
  if (!client.email) throw AppError.invalid(['body', 'client_id'], 'This client has no email address');
  const secret = options.inboundSecret ?? config.emailInboundSecret;
  if (!secret) throw new AppError('not_configured', 'No inbound email secret to post the webhook with');
  const answered = await emailToAnswer(businessId, reply.clientId, reply.replyToMessageId, tx);
  const to = await businessMailAddress(businessId, reply.clientId, answered?.from ?? null, tx);
  if (!to) throw new AppError('bad_request', 'This business has no email address, so the client has nowhere to write');

  let attachment: { filename: string; contentType: string; content: Buffer } | null = null;
  if (reply.attachment) {
    const content = Buffer.from(reply.attachment.contentBase64, 'base64');
    if (content.length > MAX_ATTACHMENT_BYTES) throw new AppError('payload_too_large', 'The attachment is over 5 MiB');
    attachment = {
      filename: reply.attachment.filename,
      contentType: reply.attachment.contentType || 'application/octet-stream',
      content,
    };
  }

  const domain = client.email.slice(client.email.lastIndexOf('@') + 1) || 'sandbox.invalid';
  const messageId = `<${randomUUID()}@${domain}>`;
  const subject =
    reply.subject?.trim() || (answered?.subject ? `Re: ${answered.subject.replace(/^(re:\s*)+/i, '')}` : '(no subject)');
  const references = answered ? [...(answered.inReplyTo ? [answered.inReplyTo] : []), answered.emailMessageId!] : [];
  const form = inboundParseForm({
    from: mailbox(client.name, client.email),
    to,
    subject,
    text: reply.text,
    html: reply.html || null,
    messageId,
    inReplyTo: answered?.emailMessageId ?? null,
    references,
    envelope: { from: client.email, to: [to] },
    attachments: attachment ? [attachment] : [],
  });
  const { contentType, bytes } = await multipartBody(form.fields, form.files);
  const target = `${options.targetBaseUrl ?? config.publicBaseUrl}${inboundEmailPath('sendgrid')}?secret=${encodeURIComponent(secret)}`;
  await post(target, { 'content-type': contentType }, new Uint8Array(bytes), options, 'email');

  const [stored] = await tx
    .select({ id: messages.id, conversationId: messages.conversationId })
    .from(messages)
    .where(
      and(eq(messages.provider, 'sendgrid'), eq(messages.providerMessageId, messageId), eq(messages.businessId, businessId)),
    );
  return {
    channel: 'email',
    providerId: messageId,
    messageId: stored?.id ?? null,
    conversationId: stored?.conversationId ?? null,
  };
}

/** POSTs like the provider (no redirects followed); anything but a 2xx is an error naming the answer. */
async function post(
  url: string,
  headers: Record<string, string>,
  body: string | Uint8Array,
  options: ReplyOptions,
  what: string,
): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'user-agent': 'convo-sandbox/1.0' },
      body: body as BodyInit,
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
    });
  } catch (err) {
    throw new AppError('unavailable', `Could not reach the ${what} webhook at ${new URL(url).origin}: ${(err as Error).message}`);
  }
  if (res.status < 200 || res.status >= 300) {
    const text = await res.text().catch(() => '');
    let detail = text.slice(0, 300);
    try {
      detail = String((JSON.parse(text) as { detail?: unknown }).detail ?? detail);
    } catch {
      // not JSON: keep the text
    }
    throw new AppError('unavailable', `The ${what} webhook answered ${res.status}${detail ? `: ${detail}` : ''}`);
  }
  await res.arrayBuffer().catch(() => undefined);
}
