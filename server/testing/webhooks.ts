import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { db } from '@/server/db/client';
import { expectedTwilioSignature } from '@/server/providers/twilio-signature';
import { TWILIO_WEBHOOK_PATHS, twilioSid, twilioWebhookRequest } from '@/server/providers/webhook-requests';
import { api, match } from './http';

/**
 * Helpers for tests that play a provider: Twilio-signed form webhooks, SendGrid-signed event
 * batches and SendGrid Inbound Parse multipart bodies, all posted to the real route handlers.
 */

/** In tests TWILIO_AUTH_TOKEN is unset, so the development token verifies signatures. */
export const TWILIO_DEV_TOKEN = 'sandbox-dev-auth-token-not-secret';
/** PUBLIC_BASE_URL in vitest.config.ts. */
export const TEST_BASE_URL = 'http://localhost:3000';

export const TWILIO_PATHS = TWILIO_WEBHOOK_PATHS;
// Shared with the /sandbox page, which plays the providers too.
export { multipartBody, twilioSid, type MultipartFile } from '@/server/providers/webhook-requests';

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
  return expectedTwilioSignature(
    options.token ?? TWILIO_DEV_TOKEN,
    `${options.baseUrl ?? TEST_BASE_URL}${path}`,
    options.signedParams ?? params,
  );
}

/** Headers and form body of a Twilio webhook as Twilio would send it. */
export function twilioRequest(path: string, params: TwilioParams, options: TwilioSignOptions = {}) {
  return twilioWebhookRequest(`${options.baseUrl ?? TEST_BASE_URL}${path}`, params, options.token ?? TWILIO_DEV_TOKEN, options);
}

/** The form Twilio posts for an inbound SMS (the fields the code reads), with `extra` on top. */
export const inboundSmsForm = (to: string, from: string, body: string, extra: TwilioParams = {}): TwilioParams => ({
  MessageSid: twilioSid('SM'),
  AccountSid: 'AC' + 'f'.repeat(32),
  From: from,
  To: to,
  Body: body,
  NumMedia: '0',
  NumSegments: '1',
  ApiVersion: '2010-04-01',
  ...extra,
});

export const postTwilio = (path: string, params: TwilioParams, options: TwilioSignOptions = {}) =>
  api.post(path, twilioRequest(path, params, options));

/** A SendGrid Event Webhook verification key pair; `publicKeyBase64` is what Mail Settings shows (DER SPKI). */
export function sendgridKeyPair(): { privateKey: KeyObject; publicKeyBase64: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { privateKey, publicKeyBase64: publicKey.export({ format: 'der', type: 'spki' }).toString('base64') };
}

/** A fresh key pair whose public half the app now verifies SendGrid events with (SENDGRID_WEBHOOK_PUBLIC_KEY). */
export function installSendgridKeyPair(): { privateKey: KeyObject; publicKeyBase64: string } {
  const keys = sendgridKeyPair();
  process.env.SENDGRID_WEBHOOK_PUBLIC_KEY = keys.publicKeyBase64;
  return keys;
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
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-twilio-email-event-webhook-timestamp': timestamp,
  };
  const signature =
    options.signature === undefined ? sendgridSignature(privateKey, timestamp, options.signedBody ?? body) : options.signature;
  if (signature !== null) headers['x-twilio-email-event-webhook-signature'] = signature;
  return { headers, body };
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
