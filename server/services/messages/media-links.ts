import { createHmac, timingSafeEqual } from 'node:crypto';
import { env } from '@/server/env';
import { MEDIA_URL_TTL_SECONDS } from '@/server/shared/limits';

/**
 * The URLs Twilio fetches our MMS uploads from (docs/api.md#mms-uploads): PUBLIC_BASE_URL + a
 * public route naming the business and the upload, with an expiry and an HMAC over all three
 * (MEDIA_URL_SECRET). The send worker builds one for every attempt, so a retried send never
 * hands Twilio a stale URL; nothing stores or logs them.
 */

/** The public route, under PUBLIC_BASE_URL: `/api/v1/public-media/{business_id}/{media_id}?expires=…&signature=…`. */
export const PUBLIC_MEDIA_PATH = '/api/v1/public-media';

const signature = (businessId: number, mediaId: number, expires: number, secret: string) =>
  createHmac('sha256', secret).update(`mms-media:${businessId}:${mediaId}:${expires}`).digest('base64url');

/** A URL that serves the upload's bytes to anyone holding it, until `now` + MEDIA_URL_TTL_SECONDS. */
export function signedMediaUrl(businessId: number, mediaId: number, now = Date.now(), config = env()): string {
  const expires = Math.floor(now / 1000) + MEDIA_URL_TTL_SECONDS;
  const sig = signature(businessId, mediaId, expires, config.mediaUrlSecret);
  return `${config.publicBaseUrl}${PUBLIC_MEDIA_PATH}/${businessId}/${mediaId}?expires=${expires}&signature=${sig}`;
}

export type MediaLinkCheck = { ok: true; secondsLeft: number } | { ok: false; reason: 'bad_signature' | 'expired' };

/**
 * Checks a signed URL's parts. The signature first (compared in constant time), so a changed
 * expiry is a bad signature, not an extension; then the expiry.
 */
export function checkMediaLink(
  link: { businessId: number; mediaId: number; expires: number; signature: string },
  now = Date.now(),
  config = env(),
): MediaLinkCheck {
  const expected = Buffer.from(signature(link.businessId, link.mediaId, link.expires, config.mediaUrlSecret));
  const given = Buffer.from(link.signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad_signature' };
  const secondsLeft = link.expires - Math.floor(now / 1000);
  return secondsLeft > 0 ? { ok: true, secondsLeft } : { ok: false, reason: 'expired' };
}
