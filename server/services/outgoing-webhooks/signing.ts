import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signatures (docs/api.md#webhooks-you-receive-from-us): a secret is `whsec_`
 * and the base64 of a random key; a signature is `v1,` and the base64 HMAC-SHA256, under that key,
 * of `{webhook-id}.{webhook-timestamp}.{body}`. During a rotation both secrets sign, space-separated,
 * so a receiver that knows either one verifies.
 */
const PREFIX = 'whsec_';

/** 24 random bytes, as the specification's reference implementations make them. */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(24).toString('base64');
}

export function signWebhook(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
      return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
    })
    .join(' ');
}
