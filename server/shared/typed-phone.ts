/**
 * How a search term typed as a phone number is read, by the client search (server/services/search.ts)
 * and by the inbox, which highlights those digits in the numbers it shows. Bundled for the browser:
 * pure code only.
 */

/** What people type in a phone number besides digits: spaces, `+`, `(`, `)`, `.`, `-`. */
const PHONE_TYPED = /^[\d\s+().-]+$/;

/** Longer than any number with its punctuation: not a number. */
const MAX_TYPED_LENGTH = 64;

/**
 * The digits of a term typed as (part of) a phone number — `0175`, `555-0175`, `(415) 555-0175`,
 * `+1 415.555.0175` — or null when the term has anything else in it or fewer than `min` digits.
 * Stored numbers are E.164 (`+` and digits), so these digits are a substring of the number
 * however it was typed, as long as the typed part has no trunk prefix (a national `0…` is found by
 * reading the whole term as a number instead).
 */
export function typedPhoneDigits(term: string, min = 3): string | null {
  if (term.length > MAX_TYPED_LENGTH || !PHONE_TYPED.test(term)) return null;
  const digits = term.replace(/\D/g, '');
  return digits.length >= min ? digits : null;
}
