import { createHash } from 'node:crypto';
import busboy from 'busboy';
import addressparser from 'nodemailer/lib/addressparser';
import { and, eq, sql } from 'drizzle-orm';
import { equalsAny } from '@/db/sql-array';
import { db, type Tx } from '@/server/db/client';
import { businessEmailSenders, businesses, messages, type StoredAttachment } from '@/db/schema';
import { cleanJson } from '@/server/lib/pg-text';
import { email } from '@/server/schemas/common';
import { insertMessages } from '@/server/services/messages/insert';
import { cancelScheduledOnReply } from '@/server/services/messages/lifecycle';
import { ensureConversations, touchConversations } from '@/server/services/conversations/activity';
import { findOrCreateClientByEmail } from '@/server/services/directory';
import { markEvent, processOrRetry, storeEvent } from './events';

export type InboundEmail = {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  headers: string;
  envelope: { to?: string[]; from?: string } | null;
  attachments: StoredAttachment[];
};

/**
 * The addresses of an address header (`"Lee, Maya" <maya@x.test>, b@y.test`), lower-cased, valid
 * ones only. nodemailer's addressparser is a linear tokenizer: patterns that searched the header
 * for addresses backtracked quadratically on long hostile values.
 */
export const addresses = (value: string) => [
  ...new Set(
    addressparser(value.slice(0, MAX_ADDRESS_HEADER), { flatten: true })
      .map((a) => a.address.toLowerCase())
      .filter((a) => email.safeParse(a).success),
  ),
];
const displayName = (value: string) =>
  addressparser(value.slice(0, MAX_ADDRESS_HEADER), { flatten: true })[0]?.name.slice(0, 200) || null;
/** An address header longer than this is cut: no real To or From comes near it. */
const MAX_ADDRESS_HEADER = 10_000;

/** One header's value from a raw header block (continuation lines folded). */
export function headerValue(block: string, name: string): string | null {
  const unfolded = block.replace(/\r?\n[ \t]+/g, ' ');
  const match = unfolded.match(new RegExp(`^${name}:[ \\t]*(.*)$`, 'im'));
  return match ? match[1]!.trim() : null;
}
const messageIds = (value: string | null) => (value ? (value.match(/<[^<>\s]+>/g) ?? []) : []);

/**
 * Inbound Parse multipart body → our fields. Each text field arrives in the mail's own charset,
 * named by the `charsets` field (e.g. {"text":"iso-8859-1"}), so fields are read as raw bytes
 * (busboy, latin1 = byte-preserving) and decoded with that charset; attachments stay bytes.
 */
export function parseInboundForm(rawBytes: Buffer, contentType: string): Promise<InboundEmail> {
  return new Promise((resolve, reject) => {
    const fields = new Map<string, Buffer>();
    const attachments: StoredAttachment[] = [];
    const parser = busboy({
      headers: { 'content-type': contentType },
      defParamCharset: 'utf8',
      defCharset: 'latin1',
      limits: { fieldSize: 10 * 1024 * 1024 },
    });
    parser.on('field', (name, value) => fields.set(name, Buffer.from(value, 'latin1')));
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      // A body cut off inside a file part errors on the part's stream too: handled here, or it would
      // be an uncaught exception (the request itself is answered 400 by the parser's error).
      stream.on('error', reject);
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (!/^attachment\d+$/.test(name)) return;
        const bytes = Buffer.concat(chunks);
        attachments.push({
          filename: info.filename || name,
          content_type: info.mimeType || null,
          url: null,
          size: bytes.length,
          content: bytes.toString('base64'),
        });
      });
    });
    parser.on('error', reject);
    parser.on('close', () => {
      let charsets: Record<string, string> = {};
      try {
        charsets = JSON.parse(fields.get('charsets')?.toString('utf8') ?? '{}') as Record<string, string>;
      } catch {
        charsets = {};
      }
      const field = (name: string) => decode(fields.get(name), charsets[name]);
      let envelope: InboundEmail['envelope'] = null;
      try {
        envelope = field('envelope') ? (JSON.parse(field('envelope')) as InboundEmail['envelope']) : null;
      } catch {
        envelope = null;
      }
      resolve({
        from: field('from'),
        to: field('to'),
        subject: field('subject'),
        text: field('text'),
        html: field('html') || null,
        headers: field('headers'),
        envelope,
        attachments,
      });
    });
    parser.end(rawBytes);
  });
}

function decode(bytes: Buffer | undefined, charset: string | undefined): string {
  if (!bytes) return '';
  try {
    return new TextDecoder(charset || 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes); // an unknown charset name: UTF-8 is the best guess
  }
}

/**
 * Why a mail was written by a machine, not a person, or null (RFC 3834 and common practice): an
 * out-of-office or vacation reply, a bounce, a mailing list or a no-reply sender. Stored on the
 * inbound message (`provider_metadata.automatic`) so nothing automatic answers it: two auto-answering
 * systems would otherwise write to each other forever (docs/api.md#after-hours-answer).
 */
export function automaticMail(headers: string, sender: string): string | null {
  const autoSubmitted = headerValue(headers, 'Auto-Submitted');
  if (autoSubmitted && !/^no\b/i.test(autoSubmitted)) return `Auto-Submitted: ${autoSubmitted.slice(0, 100)}`;
  const precedence = headerValue(headers, 'Precedence');
  if (precedence && /^(bulk|auto_reply|list|junk)\b/i.test(precedence)) return `Precedence: ${precedence.slice(0, 100)}`;
  for (const name of ['List-Id', 'List-Unsubscribe', 'X-Autoreply', 'X-Autorespond']) {
    if (headerValue(headers, name) !== null) return name;
  }
  // A bounce comes from the null sender (`MAIL FROM:<>`).
  if (!sender) return 'no sender';
  const local = sender.split('@')[0] ?? '';
  if (/^(no-?reply|do-?not-?reply|mailer-daemon|postmaster)([+._-]|$)/i.test(local)) return 'no-reply sender';
  return null;
}

/**
 * The businesses whose sender addresses the mail was sent to, lowest id first (deterministic): a
 * declared sender address or a business's from_email. One mail can reach several businesses.
 */
async function businessesFor(recipients: string[], tx: Tx = db): Promise<number[]> {
  if (recipients.length === 0) return [];
  const senders = await tx
    .select({ businessId: businessEmailSenders.businessId })
    .from(businessEmailSenders)
    .where(equalsAny(sql`lower(${businessEmailSenders.email})`, recipients, 'text'));
  const owners = await tx
    .select({ businessId: businesses.id })
    .from(businesses)
    .where(equalsAny(sql`lower(${businesses.fromEmail})`, recipients, 'text'));
  return [...new Set([...senders, ...owners].map((r) => r.businessId))].sort((a, b) => a - b);
}

const recipientsOf = (mail: InboundEmail) => {
  const envelope = mail.envelope?.to?.map((a) => a.toLowerCase()) ?? [];
  return envelope.length ? envelope : addresses(mail.to);
};

/**
 * docs/api.md#inbound-email: a client's email becomes an inbound EMAIL in their conversation.
 * Threading first (In-Reply-To / References against our stored Message-IDs), then the sender's
 * address; a new sender becomes a `lead`. A threaded reply from another address stays in that
 * conversation with its sender recorded and creates no client. Stored and deduplicated by the
 * mail's Message-ID (or a hash of the body when it has none).
 */
export async function handleInboundEmail(mail: InboundEmail, headers: Record<string, string>, rawBytes: Buffer, tx: Tx = db) {
  // Text PostgreSQL cannot store is cleaned; the exact bytes are then kept beside the payload.
  const { changed } = cleanJson(mail);
  // One event per receiving business, deduplicated per business: the same Message-ID sent to two
  // businesses reaches both (a mail to none is stored once, and ignored with the reason).
  const key = inboundDedupeKey(mail, rawBytes);
  const businessIds = await businessesFor(recipientsOf(mail), tx);
  let accepted = 0;
  for (const businessId of businessIds.length ? businessIds : [null]) {
    // The whole mail (attachments included) is the stored payload, so a retry has everything.
    const eventId = await storeEvent(
      {
        provider: 'sendgrid',
        kind: 'email_inbound',
        dedupeKey: businessId === null ? key : `${businessId}:${key}`,
        headers,
        payload: mail,
        rawBody: changed ? rawBytes : null,
        businessId,
      },
      tx,
    );
    if (eventId === null) continue;
    accepted++;
    await processOrRetry(eventId, 'email_inbound', () => processInboundEmail(eventId, mail, businessId, tx), tx);
  }
  return { status: accepted ? 'accepted' : 'duplicate' };
}

function inboundDedupeKey(mail: InboundEmail, rawBytes: Buffer): string {
  return headerValue(mail.headers, 'Message-ID') ?? createHash('sha256').update(rawBytes).digest('hex');
}

export async function processInboundEmail(
  eventId: number,
  mail: InboundEmail,
  forBusiness: number | null = null,
  tx: Tx = db,
): Promise<void> {
  const ownMessageId = headerValue(mail.headers, 'Message-ID');
  const dedupeKey = ownMessageId ?? `event:${eventId}`;
  const { attachments } = mail;
  await tx.transaction(async (tx) => {
    const recipients = recipientsOf(mail);
    const businessId = forBusiness ?? (await businessesFor(recipients, tx))[0];
    if (!businessId) {
      return markEvent(eventId, 'ignored', { error: `No business receives mail at ${recipients.join(', ') || mail.to}` }, tx);
    }
    const [already] = await tx.execute(
      sql`select 1 from messages where business_id = ${businessId} and provider = 'sendgrid' and provider_message_id = ${dedupeKey} limit 1`,
    );
    if (already) return markEvent(eventId, 'processed', { businessId }, tx);
    const sender = addresses(mail.envelope?.from ?? '')[0] ?? addresses(mail.from)[0] ?? '';
    const references = [
      ...messageIds(headerValue(mail.headers, 'In-Reply-To')),
      ...messageIds(headerValue(mail.headers, 'References')).reverse(),
    ];

    let conversationId: number | null = null;
    let clientId: number | null = null;
    if (references.length) {
      const [thread] = await tx
        .select({ conversationId: messages.conversationId, clientId: messages.clientId })
        .from(messages)
        .where(and(eq(messages.businessId, businessId), equalsAny(messages.emailMessageId, references, 'text')))
        .orderBy(sql`${messages.sentAt} desc`)
        .limit(1);
      if (thread) ({ conversationId, clientId } = thread);
    }
    if (!clientId) {
      clientId = await findOrCreateClientByEmail(businessId, sender, displayName(mail.from), tx);
      conversationId = (await ensureConversations(businessId, [clientId], tx)).get(clientId)!;
    }

    const automatic = automaticMail(mail.headers, sender);
    const [row] = await insertMessages(
      [
        {
          businessId,
          conversationId: conversationId!,
          clientId,
          channel: 'email',
          direction: 'inbound',
          messageType: 'EMAIL',
          senderType: 'client',
          senderId: clientId,
          receiverType: 'staff',
          content: mail.text || null,
          subject: mail.subject || null,
          fromAddress: sender,
          toAddress: recipients[0] ?? null,
          attachments: attachments.length ? attachments : null,
          status: 'received',
          origin: 'webhook',
          provider: 'sendgrid',
          providerMessageId: dedupeKey,
          providerMetadata: { ...(mail.html ? { html: mail.html } : {}), ...(automatic ? { automatic } : {}) },
          emailMessageId: ownMessageId,
          inReplyTo: references[0] ?? null,
          isRead: false,
          sentAt: new Date(),
        },
      ],
      tx,
    );
    await touchConversations([row!], tx);
    // docs/api.md#send-later: a reminder never crosses the client's own reply.
    await cancelScheduledOnReply(businessId, conversationId!, tx);
    await markEvent(eventId, 'processed', { businessId }, tx);
  });
}
