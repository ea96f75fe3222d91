import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks';
import { db } from '@/db/client';
import { api, match } from './http';

/**
 * Helpers for tests that play a provider: Twilio-signed form webhooks, SendGrid-signed event
 * batches and SendGrid Inbound Parse multipart bodies, all posted to the real route handlers.
 */

/** In tests TWILIO_AUTH_TOKEN is unset, so the development token verifies signatures. */
export const TWILIO_DEV_TOKEN = 'sandbox-dev-auth-token-not-secret';
/** PUBLIC_BASE_URL in vitest.config.ts. */
export const TEST_BASE_URL = 'http://localhost:3000';

export const TWILIO_PATHS = {
  smsIncoming: '/api/v1/webhooks/twilio/sms/incoming',
  smsStatus: '/api/v1/webhooks/twilio/sms/status',
  voiceStatus: '/api/v1/webhooks/twilio/voice/status',
} as const;

/** A Twilio-looking SID: prefix + 32 hex characters (34 in all). */
export const twilioSid = (prefix = 'SM') => `${prefix}${randomBytes(16).toString('hex')}`;

export type TwilioParams = Record<string, string>;

export type TwilioSignOptions = {
  /** The origin the signature is computed over (default PUBLIC_BASE_URL). */
  baseUrl?: string;
  token?: string;
  /** Sign these params instead of the posted ones (a tampered request). */
  signedParams?: TwilioParams;
  /** An explicit header value; `null` sends no X-Twilio-Signature at all. */
  signature?: string | null;
};

export function twilioSignature(path: string, params: TwilioParams, options: TwilioSignOptions = {}): string {
  return getExpectedTwilioSignature(options.token ?? TWILIO_DEV_TOKEN, `${options.baseUrl ?? TEST_BASE_URL}${path}`, options.signedParams ?? params);
}

/** Headers and form body of a Twilio webhook as Twilio would send it. */
export function twilioRequest(path: string, params: TwilioParams, options: TwilioSignOptions = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const signature = options.signature === undefined ? twilioSignature(path, params, options) : options.signature;
  if (signature !== null) headers['x-twilio-signature'] = signature;
  return { headers, body: new URLSearchParams(params).toString() };
}

export const postTwilio = (path: string, params: TwilioParams, options: TwilioSignOptions = {}) => api.post(path, twilioRequest(path, params, options));

/** A SendGrid Event Webhook verification key pair; `publicKeyBase64` is what Mail Settings shows (DER SPKI). */
export function sendgridKeyPair(): { privateKey: KeyObject; publicKeyBase64: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { privateKey, publicKeyBase64: publicKey.export({ format: 'der', type: 'spki' }).toString('base64') };
}

/** ECDSA P-256 / SHA-256 over `timestamp + rawBody`, base64 (DER), as SendGrid signs. */
export function sendgridSignature(privateKey: KeyObject, timestamp: string, rawBody: string): string {
  return sign('sha256', Buffer.concat([Buffer.from(timestamp), Buffer.from(rawBody)]), privateKey).toString('base64');
}

export type SendgridSignOptions = {
  timestamp?: string;
  /** An explicit header value; `null` sends no signature header. */
  signature?: string | null;
  /** Sign this text instead of the posted body (a tampered request). */
  signedBody?: string;
};

/** Headers and JSON body of a signed SendGrid event batch. */
export function sendgridRequest(privateKey: KeyObject, events: unknown[], options: SendgridSignOptions = {}) {
  const body = JSON.stringify(events);
  const timestamp = options.timestamp ?? String(Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-twilio-email-event-webhook-timestamp': timestamp };
  const signature = options.signature === undefined ? sendgridSignature(privateKey, timestamp, options.signedBody ?? body) : options.signature;
  if (signature !== null) headers['x-twilio-email-event-webhook-signature'] = signature;
  return { headers, body };
}

export type MultipartFile = { field: string; filename: string; contentType: string; content: Buffer | string };

/** A multipart/form-data body built by the platform's own FormData encoder: its bytes and content type. */
export async function multipartBody(fields: Record<string, string>, files: MultipartFile[] = []): Promise<{ contentType: string; bytes: Buffer }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const f of files) {
    const bytes = typeof f.content === 'string' ? Buffer.from(f.content) : f.content;
    form.append(f.field, new Blob([new Uint8Array(bytes)], { type: f.contentType }), f.filename);
  }
  const encoded = new Response(form);
  return { contentType: encoded.headers.get('content-type')!, bytes: Buffer.from(await encoded.arrayBuffer()) };
}

/**
 * POSTs raw bytes to a route handler in-process (like `api.post`, which only takes string bodies,
 * so binary multipart parts survive unchanged).
 */
export async function postBytes(pathWithQuery: string, headers: Record<string, string>, bytes: Uint8Array): Promise<Response> {
  const url = new URL(pathWithQuery, TEST_BASE_URL);
  const found = match(url.pathname);
  if (!found) throw new Error(`No route for ${url.pathname}`);
  const mod = (await import(found.file)) as Record<string, (req: Request, ctx: unknown) => Promise<Response>>;
  const handler = mod.POST;
  if (!handler) throw new Error(`${url.pathname} has no POST handler`);
  const req = new Request(url, { method: 'POST', headers: { ...headers, host: url.host }, body: new Uint8Array(bytes) });
  return handler(req, { params: Promise.resolve(found.params) });
}

/** pg-boss jobs of a queue whose data has `key` = `value` (e.g. webhook.retry by eventId). */
export async function jobsWhere(queue: string, key: string, value: string | number): Promise<{ id: string; state: string }[]> {
  return [
    ...(await db.execute<{ id: string; state: string }>(
      sql`select id::text as id, state::text as state from pgboss.job where name = ${queue} and data->>${key} = ${String(value)}`,
    )),
  ];
}
