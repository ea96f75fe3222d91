import { createPublicKey, timingSafeEqual, verify, type KeyObject } from 'node:crypto';
import { env } from '@/server/env';
import { AppError } from '@/server/errors';

/**
 * The body limit of the SendGrid Event Webhook (413 past it, unread): a batch is a JSON array of
 * events of a few hundred bytes each; 5 MiB holds thousands. Inbound Parse, whole emails with
 * attachments, keeps the REST limit of 10 MiB.
 */
export const SENDGRID_EVENTS_MAX_BYTES = 5 * 1024 * 1024;

let cachedKey: { source: string; key: KeyObject } | undefined;

function publicKey(source: string): KeyObject {
  if (cachedKey?.source === source) return cachedKey.key;
  const key = source.includes('BEGIN PUBLIC KEY')
    ? createPublicKey(source)
    : createPublicKey({ key: Buffer.from(source.replace(/\s+/g, ''), 'base64'), format: 'der', type: 'spki' });
  cachedKey = { source, key };
  return key;
}

/**
 * How far the signed timestamp may be from our clock, either way (seconds). A captured signed batch
 * can be replayed only within this window; inside it, deduplication by `sg_event_id` makes a replay
 * a no-op. Generous enough for clock skew and delivery delays (Stripe uses 300 s, Svix 5 min).
 */
export const SENDGRID_SIGNATURE_MAX_AGE_SECONDS = 600;

/**
 * SendGrid's signed Event Webhook (docs/providers.md#sendgrid-event-webhook-signature): ECDSA P-256 / SHA-256 over the timestamp
 * header followed by the raw body, with the verification key from Mail Settings (base64 DER SPKI);
 * the timestamp (Unix seconds) must also be within SENDGRID_SIGNATURE_MAX_AGE_SECONDS of now.
 * Without a configured key, development accepts unsigned events and production refuses them.
 */
export function verifySendgridSignature(req: Request, rawBody: Buffer): void {
  const configured = env().sendgridWebhookPublicKey;
  if (!configured) {
    if (env().production)
      throw new AppError('forbidden', 'SendGrid webhooks are refused: SENDGRID_WEBHOOK_PUBLIC_KEY is not configured');
    return;
  }
  const signature = req.headers.get('x-twilio-email-event-webhook-signature');
  const timestamp = req.headers.get('x-twilio-email-event-webhook-timestamp');
  let ok = false;
  if (signature && timestamp) {
    try {
      ok = verify(
        'sha256',
        Buffer.concat([Buffer.from(timestamp), rawBody]),
        publicKey(configured),
        Buffer.from(signature, 'base64'),
      );
    } catch {
      ok = false;
    }
  }
  if (!ok) throw new AppError('forbidden', 'Invalid SendGrid signature');
  const seconds = /^\d{1,12}$/.test(timestamp!) ? Number(timestamp) : NaN;
  if (!(Math.abs(Date.now() / 1000 - seconds) <= SENDGRID_SIGNATURE_MAX_AGE_SECONDS)) {
    throw new AppError('forbidden', 'Stale SendGrid signature: the timestamp is outside the accepted window');
  }
}

/**
 * SendGrid Inbound Parse is unsigned, so a shared secret in its URL (`?secret=EMAIL_INBOUND_SECRET`)
 * authenticates it, compared in constant time. 403 when it is missing, wrong or not configured.
 */
export function verifyInboundEmailSecret(given: string | undefined): void {
  if (!secretMatches(given)) throw new AppError('forbidden', 'Invalid inbound email secret');
}

function secretMatches(given: string | undefined): boolean {
  const expected = env().emailInboundSecret;
  if (!expected || !given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
