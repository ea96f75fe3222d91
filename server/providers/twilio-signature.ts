import { getExpectedTwilioSignature, validateRequest } from 'twilio/lib/webhooks/webhooks.js';
import { env } from '@/server/env';
import { AppError } from '@/server/errors';
import { groupPairs } from '@/server/lib/pairs';
import { cleanJson } from '@/server/lib/pg-text';
import { int32FromDigits } from '@/server/schemas/common';

export type FormParams = Record<string, string | string[]>;

/**
 * The body limit of every Twilio webhook (413 past it, unread): a Twilio form is a few KB (an SMS
 * body is at most 1,600 characters), so 64 KiB leaves room for every parameter Twilio adds while
 * an unsigned request costs little to refuse.
 */
export const TWILIO_WEBHOOK_MAX_BYTES = 64 * 1024;

/**
 * A form body → params; a name given more than once keeps every value (Twilio signs them all).
 * One pass, values pushed in place: linear however often a name repeats (copying the array on each
 * repeat made an unsigned 160 KB body of `a&a&…` cost 48 s before the signature was even checked).
 */
function parseForm(raw: string): FormParams {
  return groupPairs(new URLSearchParams(raw));
}

/** Signed Twilio form parameters, cleaned to be storable; `cleaned` says whether anything had to change. */
export type VerifiedForm = { params: FormParams; cleaned: boolean };

export const param = (params: FormParams, name: string): string | undefined => {
  const v = params[name];
  return Array.isArray(v) ? v[0] : v;
};

/**
 * A count Twilio sends (CallDuration, NumSegments, NumMedia…) as it may be stored in an `integer`
 * column: a plain non-negative integer up to 2147483647, else null (a signed form can still carry
 * anything, and an out-of-range value must not fail the statement that stores it).
 */
export const countParam = (params: FormParams, name: string): number | null => int32FromDigits(param(params, name));

/**
 * X-Twilio-Signature over PUBLIC_BASE_URL + the request's path and query and every posted
 * parameter (Twilio's documented HMAC-SHA1 scheme). Behind a proxy the request URL is internal, so
 * the public one is rebuilt from configuration, never from forwarded headers. 403 on any mismatch,
 * before anything else looks at the parameters. The body's size is bounded by the operation
 * (64 KiB) and parsing is linear, so an unsigned request costs little.
 *
 * After verification the values are cleaned of what PostgreSQL cannot store (server/lib/pg-text.ts);
 * the caller keeps the raw bytes when `cleaned` is true.
 */
export function verifyTwilioSignature(req: Request, rawBody: string): VerifiedForm {
  const token = env().twilio.authToken;
  const signature = req.headers.get('x-twilio-signature');
  const url = new URL(req.url);
  const publicUrl = `${env().publicBaseUrl}${url.pathname}${url.search}`;
  const params = parseForm(rawBody);
  if (!token || !signature || !validateRequest(token, signature, publicUrl, params)) {
    throw new AppError('forbidden', 'Invalid Twilio signature');
  }
  const { changed } = cleanJson(params);
  return { params, cleaned: changed };
}

/**
 * The X-Twilio-Signature Twilio would send for a form POST of `params` to `url` (the public URL,
 * PUBLIC_BASE_URL + path, that verifyTwilioSignature rebuilds). Used to play Twilio: the /sandbox
 * page's client replies and the tests' webhooks (docs/providers.md#signing-test-webhooks).
 */
export function expectedTwilioSignature(token: string, url: string, params: FormParams): string {
  return getExpectedTwilioSignature(token, url, params);
}
