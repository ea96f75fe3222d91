import { getExpectedTwilioSignature, validateRequest } from 'twilio/lib/webhooks/webhooks.js';
import { env } from '@/server/env';
import { AppError } from '@/server/errors';

export type FormParams = Record<string, string | string[]>;

/** A form body → params; a name given more than once keeps every value (Twilio signs them all). */
export function parseForm(raw: string): FormParams {
  const params: FormParams = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    const prev = params[key];
    params[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return params;
}

export const param = (params: FormParams, name: string): string | undefined => {
  const v = params[name];
  return Array.isArray(v) ? v[0] : v;
};

/**
 * X-Twilio-Signature over PUBLIC_BASE_URL + the request's path and query and every posted
 * parameter (providers.md §2). Behind a proxy the request URL is internal, so the public one is
 * rebuilt from configuration, never from forwarded headers. 403 on any mismatch.
 */
export function verifyTwilioSignature(req: Request, rawBody: string): FormParams {
  const token = env().twilio.authToken;
  const signature = req.headers.get('x-twilio-signature');
  const url = new URL(req.url);
  const publicUrl = `${env().publicBaseUrl}${url.pathname}${url.search}`;
  const params = parseForm(rawBody);
  if (!token || !signature || !validateRequest(token, signature, publicUrl, params)) {
    throw new AppError('forbidden', 'Invalid Twilio signature');
  }
  return params;
}

/**
 * The X-Twilio-Signature Twilio would send for a form POST of `params` to `url` (the public URL,
 * PUBLIC_BASE_URL + path, that verifyTwilioSignature rebuilds). Used to play Twilio: the /sandbox
 * page's client replies and the tests' webhooks (providers.md §2.3).
 */
export function expectedTwilioSignature(token: string, url: string, params: FormParams): string {
  return getExpectedTwilioSignature(token, url, params);
}
