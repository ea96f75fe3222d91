import { randomBytes } from 'node:crypto';
import { expectedTwilioSignature, type FormParams } from './twilio-signature';

/**
 * The requests providers send us, built the way the providers build them: Twilio-signed form
 * webhooks and SendGrid Inbound Parse multipart bodies. The /sandbox page uses them to reply as a
 * client over HTTP; the tests use them (server/testing/webhooks.ts) to post to the route handlers.
 */

export const TWILIO_WEBHOOK_PATHS = {
  smsIncoming: '/api/v1/webhooks/twilio/sms/incoming',
  smsStatus: '/api/v1/webhooks/twilio/sms/status',
  voiceStatus: '/api/v1/webhooks/twilio/voice/status',
} as const;

export const inboundEmailPath = (provider = 'sendgrid') => `/api/v1/email/webhooks/${provider}/inbound`;

/** A Twilio-looking SID: prefix + 32 hex characters (34 in all). */
export const twilioSid = (prefix = 'SM') => `${prefix}${randomBytes(16).toString('hex')}`;

type TwilioRequestOptions = {
  /** Sign these params instead of the posted ones (a tampered request). */
  signedParams?: FormParams;
  /** An explicit header value; `null` sends no X-Twilio-Signature at all. */
  signature?: string | null;
};

/**
 * Headers and form body of a Twilio webhook as Twilio sends it: the params form-encoded and
 * X-Twilio-Signature computed with `token` over `signedUrl`, the public URL (PUBLIC_BASE_URL +
 * path) the handler verifies against, whatever address the request is actually sent to.
 */
export function twilioWebhookRequest(
  signedUrl: string,
  params: Record<string, string>,
  token: string,
  options: TwilioRequestOptions = {},
) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const signature =
    options.signature === undefined
      ? expectedTwilioSignature(token, signedUrl, options.signedParams ?? params)
      : options.signature;
  if (signature !== null) headers['x-twilio-signature'] = signature;
  return { headers, body: new URLSearchParams(params).toString() };
}

export type MultipartFile = { field: string; filename: string; contentType: string; content: Buffer | string };

/** A multipart/form-data body built by the platform's own FormData encoder: its bytes and content type. */
export async function multipartBody(
  fields: Record<string, string>,
  files: MultipartFile[] = [],
): Promise<{ contentType: string; bytes: Buffer }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const f of files) {
    const bytes = typeof f.content === 'string' ? Buffer.from(f.content) : f.content;
    form.append(f.field, new Blob([new Uint8Array(bytes)], { type: f.contentType }), f.filename);
  }
  const encoded = new Response(form);
  return { contentType: encoded.headers.get('content-type')!, bytes: Buffer.from(await encoded.arrayBuffer()) };
}

type InboundParseMail = {
  /** `"Name" <address>` or a bare address. */
  from: string;
  to: string;
  subject: string;
  text: string;
  html?: string | null;
  /** RFC 5322 Message-ID, with angle brackets. */
  messageId: string;
  inReplyTo?: string | null;
  references?: string[];
  envelope: { from: string; to: string[] };
  attachments?: { filename: string; contentType: string; content: Buffer }[];
  date?: Date;
};

/**
 * The fields SendGrid Inbound Parse posts (default, unparsed-raw off): `headers` (the raw header
 * block), `from`, `to`, `subject`, `text`, `html`, `envelope` (JSON), `charsets`, `attachments`
 * (a count), `attachment-info` and one file part `attachmentN` per attachment.
 */
export function inboundParseForm(mail: InboundParseMail): { fields: Record<string, string>; files: MultipartFile[] } {
  const attachments = mail.attachments ?? [];
  const boundary = `sandbox${randomBytes(8).toString('hex')}`;
  const headerLines = [
    `Received: by sandbox with SMTP id ${randomBytes(6).toString('hex')}; ${(mail.date ?? new Date()).toUTCString()}`,
    `From: ${mail.from}`,
    `To: ${mail.to}`,
    `Subject: ${mail.subject.replace(/[\r\n]+/g, ' ')}`,
    `Date: ${(mail.date ?? new Date()).toUTCString()}`,
    `Message-ID: ${mail.messageId}`,
    ...(mail.inReplyTo ? [`In-Reply-To: ${mail.inReplyTo}`] : []),
    ...(mail.references?.length ? [`References: ${mail.references.join(' ')}`] : []),
    'MIME-Version: 1.0',
    `Content-Type: multipart/${attachments.length ? 'mixed' : 'alternative'}; boundary="${boundary}"`,
  ];
  const fields: Record<string, string> = {
    headers: headerLines.join('\n') + '\n',
    dkim: '{none}',
    to: mail.to,
    from: mail.from,
    subject: mail.subject,
    text: mail.text,
    sender_ip: '127.0.0.1',
    spam_score: '0.0',
    envelope: JSON.stringify(mail.envelope),
    charsets: JSON.stringify({
      to: 'UTF-8',
      from: 'UTF-8',
      subject: 'UTF-8',
      text: 'UTF-8',
      ...(mail.html ? { html: 'UTF-8' } : {}),
    }),
    SPF: 'pass',
  };
  if (mail.html) fields.html = mail.html;
  const files = attachments.map((a, i) => ({
    field: `attachment${i + 1}`,
    filename: a.filename,
    contentType: a.contentType,
    content: a.content,
  }));
  if (files.length) {
    fields.attachments = String(files.length);
    fields['attachment-info'] = JSON.stringify(
      Object.fromEntries(files.map((f) => [f.field, { filename: f.filename, name: f.filename, type: f.contentType }])),
    );
  }
  return { fields, files };
}
