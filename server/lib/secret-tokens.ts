import { createHash, randomBytes } from 'node:crypto';

/** Random secret tokens (API keys, session tokens, login codes) and the hash stored in place of a key. */

export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

export const newSecretToken = (prefix = '') => prefix + randomBytes(32).toString('base64url');

/**
 * A new business API key: the plain key, returned once, and what the api_keys row stores of it
 * (its hash, and its first characters to recognise it by).
 */
export function newBusinessApiKey(): { key: string; keyHash: string; prefix: string } {
  const key = newSecretToken('bk_');
  return { key, keyHash: sha256(key), prefix: key.slice(0, 8) };
}
