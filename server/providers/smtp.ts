import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { Attachment, NodemailerError, SendMailOptions, SMTPPoolOptions } from 'nodemailer';
import {
  MESSAGE_ID_HEADER,
  ProviderError,
  type EmailAttachmentInput,
  type EmailProvider,
  type EmailSendRequest,
  type EmailSendResult,
} from './types';
import { fetchPublic, FetchRefused, type FetchPolicy } from '@/server/lib/public-fetch';
import { isBase64, trimEnd } from '@/server/lib/text';
import { MAX_ATTACHMENT_BYTES } from '@/server/shared/limits';
import { emailErrorMessage } from '@/server/shared/provider-errors';

/**
 * SMTP email provider on nodemailer's pooled transport.
 *
 * Connection URL: `smtp://user:pass@host:port` (STARTTLS when the server offers it) or
 * `smtps://user:pass@host:port` (implicit TLS). Default ports: 587 for smtp://, 465 for smtps://.
 * User and password are percent-decoded (a SendGrid key is `smtp://apikey:SG.xxx@smtp.sendgrid.net:587`).
 *
 * TLS decisions for smtp:// (smtps:// is always TLS):
 * - `ignoreTLS` (never STARTTLS): when the URL says `?ignoreTLS=true`, or by default when the host is a loopback
 *   address (127.0.0.1, ::1, localhost): local sinks (our test sink, mailpit…) rarely have a certificate.
 *   `?ignoreTLS=false` turns the loopback default off.
 * - `requireTLS` (fail instead of sending credentials or mail in clear text when the server does not offer
 *   STARTTLS): when the URL says `?requireTLS=true`, or by default when the URL carries credentials and the
 *   host is not loopback. `?requireTLS=false` turns that default off (a trusted relay on a private network).
 * - Anything else: nodemailer's default, opportunistic STARTTLS.
 *
 * nodemailer never reads a file or a URL (`disableFileAccess`, `disableUrlAccess`): attachment content comes
 * from users. A URL attachment is fetched here, at send time, through fetchPublic (server/lib/public-fetch.ts):
 * public addresses only, the resolved address pinned, redirects re-checked, 10 s, 5 MiB while streaming; a
 * refused or oversized URL fails the message permanently with the reason, and nothing is sent.
 */
type SmtpProviderOptions = {
  url: string;
  /**
   * How URL attachments are fetched: public addresses only. Tests that serve attachments from a
   * local server pass a policy that admits it; production never sets this.
   */
  attachmentFetchPolicy?: Partial<FetchPolicy>;
  /** Pool size (nodemailer default 5). */
  maxConnections?: number;
  /** Messages per connection before it is recycled (nodemailer default 100). */
  maxMessages?: number;
};

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

type ParsedSmtpUrl = Pick<SMTPPoolOptions, 'host' | 'port' | 'secure' | 'auth' | 'ignoreTLS' | 'requireTLS'>;

function queryFlag(url: URL, name: string): boolean | undefined {
  const value = url.searchParams.get(name);
  if (value === null) return undefined;
  if (value === 'true' || value === '1' || value === '') return true;
  if (value === 'false' || value === '0') return false;
  throw new Error(`SMTP URL: ?${name} must be true or false`);
}

/** Exported for tests: the connection options we derive from an SMTP URL. */
export function parseSmtpUrl(raw: string): ParsedSmtpUrl {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('SMTP URL is not a valid URL (expected smtp://user:pass@host:port or smtps://…)');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    throw new Error(`SMTP URL must use smtp:// or smtps://, not ${url.protocol}//`);
  }
  const host = url.hostname;
  if (!host) throw new Error('SMTP URL has no host');
  const secure = url.protocol === 'smtps:';
  const port = url.port ? Number(url.port) : secure ? 465 : 587;
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  const hasAuth = user !== '' || pass !== '';
  const loopback = LOOPBACK_HOSTS.has(host.toLowerCase());

  const ignoreTLS = !secure && (queryFlag(url, 'ignoreTLS') ?? loopback);
  const requireTLS = !secure && !ignoreTLS && (queryFlag(url, 'requireTLS') ?? (hasAuth && !loopback));

  return {
    // WHATWG URL keeps the brackets of an IPv6 host; net.connect wants it bare.
    host: host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host,
    port,
    secure,
    ...(hasAuth ? { auth: { user, pass } } : {}),
    ignoreTLS,
    requireTLS,
  };
}

/**
 * A fresh RFC 5322 Message-ID, `<uuid@domain-of-from>`, so the id is known before the send finishes (and can
 * be stored first). The domain is the part of the From address after the last `@`, lower-cased and converted to
 * punycode; `localhost` when there is no usable domain.
 */
export function newEmailMessageId(fromAddress: string): string {
  return `<${randomUUID()}@${messageIdDomain(fromAddress)}>`;
}

function messageIdDomain(fromAddress: string): string {
  const at = fromAddress.lastIndexOf('@');
  const raw = at >= 0 ? trimEnd(fromAddress.slice(at + 1).trim(), '>').trim() : '';
  if (!raw) return 'localhost';
  try {
    // WHATWG URL lower-cases and punycodes internationalised domains.
    const host = new URL(`http://${raw}/`).hostname;
    if (/^[a-z0-9.-]+$/.test(host) && !host.startsWith('.') && !host.endsWith('.')) return host;
  } catch {
    // fall through
  }
  return 'localhost';
}

function invalidAttachment(message: string): ProviderError {
  return new ProviderError('permanent', 'invalid_attachment', message);
}

async function toNodemailerAttachment(
  input: EmailAttachmentInput,
  index: number,
  policy: Partial<FetchPolicy> = {},
): Promise<Attachment> {
  const label = `attachment ${index + 1} (${JSON.stringify(input.filename)})`;
  if (!input.filename || typeof input.filename !== 'string') {
    throw invalidAttachment(`attachment ${index + 1} has no filename`);
  }
  const hasContent = input.content !== undefined && input.content !== null;
  const hasUrl = input.url !== undefined && input.url !== null && input.url !== '';
  if (hasContent === hasUrl) {
    throw invalidAttachment(`${label} needs exactly one of content (base64) or url`);
  }
  const base: Attachment = {
    filename: input.filename,
    ...(input.contentType ? { contentType: input.contentType } : {}),
  };
  if (hasContent) {
    const content = input.content as string;
    if (!isBase64(content)) throw invalidAttachment(`${label}: content is not base64`);
    return { ...base, content: Buffer.from(content, 'base64') };
  }
  // fetchPublic refuses anything but a public http(s) URL (bad_url, refused_address) before connecting.
  try {
    const fetched = await fetchPublic(input.url as string, { maxBytes: MAX_ATTACHMENT_BYTES, ...policy });
    return {
      ...base,
      content: fetched.bytes,
      ...(!input.contentType && fetched.contentType ? { contentType: fetched.contentType } : {}),
    };
  } catch (err) {
    if (!(err instanceof FetchRefused)) throw err;
    if (err.reason === 'refused_address')
      throw new ProviderError('permanent', 'attachment_url_refused', `${label}: ${err.message}`);
    if (err.reason === 'too_large') throw new ProviderError('permanent', 'attachment_too_large', `${label}: ${err.message}`);
    if (err.reason === 'bad_url') throw invalidAttachment(`${label}: ${err.message}`);
    // The host may be back later: retried with backoff like any transient fault.
    throw new ProviderError('transient', 'attachment_fetch_failed', `${label}: ${err.message}`);
  }
}

/** Maps whatever nodemailer threw to a ProviderError the send worker can act on. */
export function classifySmtpError(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  const e = (err ?? {}) as NodemailerError;
  const message = e.message || String(err);
  const code = typeof e.code === 'string' ? e.code : undefined;

  // Credentials are a configuration problem, not the message's: keep it queued until someone fixes them,
  // even though the server's reply (535) is a 5xx.
  if (code === 'EAUTH' || code === 'ENOAUTH' || code === 'EOAUTH2') {
    return new ProviderError('transient', code, emailErrorMessage(code, message) ?? message);
  }
  if (typeof e.responseCode === 'number' && e.responseCode >= 400 && e.responseCode < 600) {
    // RFC 5321: 5yz = permanent, 4yz = transient. 503 (bad sequence of commands) is a session-state error,
    // not a verdict on the message; nodemailer also treats it as retryable (`permanent: false`).
    const permanent = e.responseCode >= 500 && e.responseCode !== 503;
    const code = String(e.responseCode);
    // Plain words for staff when we have them (server/shared/provider-errors.ts), the reply kept after.
    return new ProviderError(permanent ? 'permanent' : 'transient', code, emailErrorMessage(code, message) ?? message);
  }
  // nodemailer wraps the underlying failure and keeps its code in originalCode: ESOCKET ← ECONNREFUSED,
  // ESTREAM ← EFETCH (a URL attachment could not be fetched while the message was streamed). Report the cause.
  const original = typeof e.originalCode === 'string' ? e.originalCode : undefined;
  const cause = original ?? code;
  if (cause === 'EFILEACCESS' || cause === 'EURLACCESS') {
    return new ProviderError('permanent', 'invalid_attachment', message);
  }
  // Connection failures, EFETCH (the attachment host may be back later), EPROTOCOL, EMESSAGE without a reply,
  // anything unknown: retry with backoff.
  return new ProviderError('transient', cause ?? 'unknown', message);
}

export function createSmtpProvider(options: SmtpProviderOptions): EmailProvider {
  const connection = parseSmtpUrl(options.url);
  const transport = nodemailer.createTransport({
    pool: true,
    ...connection,
    maxConnections: options.maxConnections ?? 5,
    maxMessages: options.maxMessages ?? 100,
    // nodemailer's defaults (2 min connect, 10 min socket) are too patient for a send worker.
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 60_000,
    disableFileAccess: true,
    disableUrlAccess: true,
    logger: false,
  });

  return {
    name: 'smtp',

    async send(req: EmailSendRequest): Promise<EmailSendResult> {
      // Validation errors are thrown before anything goes out.
      const attachments = await Promise.all(
        (req.attachments ?? []).map((a, i) => toNodemailerAttachment(a, i, options.attachmentFetchPolicy)),
      );
      const messageId = req.emailMessageId ?? newEmailMessageId(req.from);
      const internalId = req.messageId === null ? null : String(req.messageId);

      const mail: SendMailOptions = {
        messageId,
        from: req.fromName ? { name: req.fromName, address: req.from } : req.from,
        to: req.to,
        ...(req.cc?.length ? { cc: req.cc } : {}),
        ...(req.bcc?.length ? { bcc: req.bcc } : {}),
        subject: req.subject,
        text: req.text,
        ...(req.html ? { html: req.html } : {}),
        ...(attachments.length ? { attachments } : {}),
        ...(req.inReplyTo ? { inReplyTo: req.inReplyTo } : {}),
        ...(req.references?.length ? { references: req.references } : {}),
        headers: {
          ...(internalId === null ? {} : { [MESSAGE_ID_HEADER]: internalId }),
          // `prepared`: emitted as is. nodemailer would otherwise MIME-encode the JSON (=?UTF-8?Q?…?=), which
          // SendGrid does not decode. Safe: JSON.stringify escapes CR/LF, and the value is far below 998 chars.
          'X-SMTPAPI': {
            prepared: true,
            value: JSON.stringify({
              unique_args: {
                ...(internalId === null ? {} : { message_id: internalId }),
                ...(req.businessId ? { business_id: String(req.businessId) } : {}),
              },
            }),
          },
        },
        disableFileAccess: true,
        disableUrlAccess: true,
      };

      try {
        const info = await transport.sendMail(mail);
        return {
          messageId: info.messageId || messageId,
          accepted: (info.accepted ?? []).map(addressText),
          rejected: (info.rejected ?? []).map(addressText),
        };
      } catch (err) {
        throw classifySmtpError(err);
      }
    },

    async close(): Promise<void> {
      transport.close();
    },
  };
}

function addressText(a: unknown): string {
  if (typeof a === 'string') return a;
  if (a && typeof a === 'object' && 'address' in a) return String((a as { address: unknown }).address);
  return String(a);
}
