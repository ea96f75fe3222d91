import { getCountryCallingCode, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';

/**
 * Phone number normalisation to E.164 (`+14155550123`).
 *
 * Decisions:
 * - Acceptance is `isPossible()` (length rules of the country), not `isValid()` (number-range rules). With the
 *   bundled metadata `isValid()` happens to accept the fictional 555-01xx numbers we use in tests and seeds
 *   (+14155550123), but it also depends on how fresh the metadata is: a newly allocated range would be refused.
 *   The provider is the final judge (Twilio 21211). Side effect: a possible-but-unassigned number such as
 *   +1 015 555 0123 is accepted here and fails at send time.
 * - Letters are refused (no vanity numbers like 1-800-FLOWERS: the keypad mapping would turn a typed "O" into 6),
 *   and so are extensions (E.164 cannot carry them; dropping one silently would dial the wrong party).
 * - Strict parsing (`extract: false`): the input must be a phone number, not text containing one.
 * - International forms: `+44 …`, the default country's own international prefix (`011 44 …` for US), and `00 44 …`
 *   as a fallback when the number does not parse as a national number of the default country (00 is the
 *   international prefix in most of the world; NANP numbers never start with 0).
 */
const MAX_INPUT_LENGTH = 64;

export function normalizePhone(input: string, country = 'US'): string | null {
  if (typeof input !== 'string') return null;
  const trimmed = input.trim();
  if (!trimmed || trimmed.length > MAX_INPUT_LENGTH) return null;
  if (/\p{L}/u.test(trimmed)) return null;

  const defaultCountry = country.toUpperCase() as CountryCode;
  const direct = parsePossible(trimmed, defaultCountry);
  if (direct !== undefined) return direct;

  const compact = trimmed.replace(/[\s().-]/g, '');
  if (compact.startsWith('00') && !compact.startsWith('000')) {
    const international = parsePossible(`+${compact.slice(2)}`, defaultCountry);
    if (international !== undefined) return international;
  }
  return null;
}

function parsePossible(text: string, defaultCountry: CountryCode): string | undefined {
  let phone;
  try {
    phone = parsePhoneNumberFromString(text, { defaultCountry, extract: false });
  } catch {
    // An unknown default country throws in some versions; treat as unparsable.
    return undefined;
  }
  if (!phone || phone.ext || !phone.isPossible()) return undefined;
  return isE164(phone.number) ? phone.number : undefined;
}

/** True for a syntactically valid E.164 number: `+`, a non-zero digit, up to 15 digits in all. */
export function isE164(s: string): boolean {
  return typeof s === 'string' && /^\+[1-9]\d{1,14}$/.test(s);
}

/** `+14155550123` → `(415) 555-0123` within the business's own calling code, international otherwise; unparsable text as it is. */
export function displayPhone(e164: string, country: string): string {
  const phone = parsePhoneNumberFromString(e164);
  if (!phone) return e164;
  let own: string | null = null;
  try {
    own = getCountryCallingCode(country.toUpperCase() as CountryCode);
  } catch {
    // An unknown country: international form.
  }
  return phone.countryCallingCode === own ? phone.formatNational() : phone.formatInternational();
}
