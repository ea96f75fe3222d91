import { z } from 'zod';

/** The largest value of a PostgreSQL `integer`, the type of every id column. */
export const INT32_MAX = 2_147_483_647;

/**
 * A non-negative integer written in plain digits that fits PostgreSQL `integer`, else null: how
 * numbers inside provider payloads (Twilio counts, SendGrid unique args, dialer identities) are
 * read, since a signed payload can still carry anything.
 */
export function int32FromDigits(value: string | null | undefined): number | null {
  return value && /^\d{1,10}$/.test(value) && Number(value) <= INT32_MAX ? Number(value) : null;
}

const ID_MESSAGE = `must be an integer from 1 to ${INT32_MAX}`;

/**
 * An id in JSON (bodies, tRPC inputs): a JSON integer 1…2147483647 (PostgreSQL `integer`), never
 * coerced, so `true`, `[3]` and `"3"` are 422s naming the field rather than ids 1 and 3
 * (docs/api.md#conventions).
 */
export const id = z.number({ error: ID_MESSAGE }).int(ID_MESSAGE).min(1, ID_MESSAGE).max(INT32_MAX, ID_MESSAGE);

/**
 * A positive integer as a path or query string writes it: digits only, no sign, no leading zero,
 * no exponent or decimal point, no blank. One spelling per value, so `01` and `1` are not two URLs
 * of one resource. Linear: one character class after another, no nesting.
 */
const POSITIVE_DIGITS = /^[1-9][0-9]*$/;

/**
 * A positive integer in a path or query string ("12") → 12. Anything not in POSITIVE_DIGITS is
 * `invalid_format`; digits past `max` are `too_big`, which route() answers with a 404 in a path (a
 * well-formed id that cannot exist is just an unknown one) and a 422 in a query. The document
 * states it as an integer with its range and the pattern of its spelling.
 */
function positiveDigits(max: number, message: string) {
  return z
    .string({ error: message })
    .regex(POSITIVE_DIGITS, `${message}, in digits without sign or leading zero`)
    .transform((digits, ctx) => {
      // Past 16 digits Number() rounds; any such value is far past every max here.
      const value = digits.length > 16 ? Infinity : Number(digits);
      if (value <= max) return value;
      ctx.addIssue({ code: 'too_big', origin: 'number', maximum: max, inclusive: true, message, input: digits });
      return z.NEVER;
    })
    .meta({ type: 'integer', minimum: 1, maximum: max, pattern: POSITIVE_DIGITS.source });
}

/**
 * An id in a path or a query string (docs/api.md#conventions): digits only, 1…2147483647. In a path,
 * a larger one is a 404 like any unknown id (server/http/route.ts); in a query it is a 422.
 */
export const idParam = positiveDigits(INT32_MAX, ID_MESSAGE);

/** A non-id integer stored in an `integer` column: the whole int32 range. */
export const int32 = z
  .number({ error: 'must be an integer' })
  .int('must be an integer')
  .min(-INT32_MAX - 1)
  .max(INT32_MAX);

/**
 * An e-mail address in: trimmed, lower-cased (stored addresses are matched on lower(email)), at
 * most 254 characters (RFC 5321's path limit) and valid. The length runs first, so the format
 * pattern only ever sees short strings.
 */
export const email = z.string().trim().toLowerCase().max(254).pipe(z.email('must be an email address'));

/** `true`/`false` (also `1`/`0`) in a query string; z.coerce.boolean would read "false" as true. */
export const queryBoolean = z
  .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1');

/**
 * A timestamp in (docs/api.md#conventions): ISO 8601 date and time, with an offset honoured and none meaning UTC,
 * checked against the calendar — no 30 February, no 24:01, no bare date. Anything else is a 422.
 * Comes out as a Date. The length check runs first, so a huge value costs nothing.
 */
const MAX_TIMESTAMP_LENGTH = 40;

export const isoTimestamp = z
  .string()
  .trim()
  .transform((v, ctx) => {
    // Length is checked here, not by .max(): a failed .max() would let the value through as a
    // string to refinements that expect a Date.
    const date = v.length <= MAX_TIMESTAMP_LENGTH ? parseIsoTimestamp(v) : null;
    if (!date) {
      ctx.addIssue({
        code: 'custom',
        message: 'must be an ISO 8601 date and time, e.g. 2026-11-20T14:03:05Z',
        params: { type: 'datetime_parsing' },
      });
      return z.NEVER;
    }
    return date;
  })
  .meta({ type: 'string', format: 'date-time', maxLength: MAX_TIMESTAMP_LENGTH });

// One anchored pattern with no nested quantifiers: linear on any input.
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;

/** `2026-11-20T14:03:05.123+02:00` → Date, or null unless every part exists on the calendar. */
export function parseIsoTimestamp(value: string): Date | null {
  const m = ISO_DATE_TIME.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number, number];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const millis = m[7] === undefined ? 0 : Math.floor(Number(`0${m[7]}`) * 1000);
  const offsetHours = m[10] === undefined ? 0 : Number(m[10]);
  const offsetMinutes = m[11] === undefined ? 0 : Number(m[11]);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > monthLength(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return null;
  const sign = m[9] === '-' ? -1 : 1;
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, millis);
  const date = new Date(utc.getTime() - sign * (offsetHours * 60 + offsetMinutes) * 60_000);
  // Years 1000 to 9999 once the offset is applied: a five-digit year is written `+010000-…`, which
  // PostgreSQL does not read, and years below 1000 do not round-trip through the driver.
  const utcYear = date.getUTCFullYear();
  return utcYear < 1000 || utcYear > 9999 ? null : date;
}

const isLeapYear = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const monthLength = (year: number, month: number) =>
  month === 2 ? (isLeapYear(year) ? 29 : 28) : [31, 0, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;

/** Timestamps out: ISO 8601 UTC with milliseconds. */
export const timestampOut = z.string().meta({ format: 'date-time', example: '2026-11-20T14:03:05.123Z' });

/**
 * The deepest page a list serves. With page_size ≤ 100 the OFFSET stays under a million rows:
 * far from any integer overflow, and a bound on what one request can make PostgreSQL skip.
 */
export const MAX_PAGE = 10_000;

/**
 * `page` and `page_size` in a query string: digits, like a query id (tRPC's JSON callers declare
 * their own numbers). The default is restated for the document, which cannot see it through the
 * transform.
 */
const pageParam = (max: number, fallback: number) =>
  positiveDigits(max, `must be an integer from 1 to ${max}`).default(fallback).meta({ default: fallback });

export const paginationQuery = {
  page: pageParam(MAX_PAGE, 1),
  page_size: pageParam(100, 25),
};

export const businessPath = z.object({ business_id: idParam });

/** docs/api.md#search: a search term has at least 3 characters once trimmed (shorter ones cannot use a trigram index). */
export const MIN_SEARCH_TERM_LENGTH = 3;
/** The 422 message of a term under MIN_SEARCH_TERM_LENGTH, shared by the query schemas and the services. */
export const SEARCH_TERM_TOO_SHORT = `must be at least ${MIN_SEARCH_TERM_LENGTH} characters`;

/** The longest `search` filter of a list, and of the inbox's client lookup. */
export const MAX_LIST_SEARCH_LENGTH = 100;

/** The `search` parameter of the conversation, client and staff lists: trimmed, 3–100 characters (docs/api.md#clients-staff-and-locations, #limits). */
export const listSearch = (what: string, more = '') =>
  z
    .string()
    .trim()
    .min(MIN_SEARCH_TERM_LENGTH, SEARCH_TERM_TOO_SHORT)
    .max(MAX_LIST_SEARCH_LENGTH)
    .meta({
      description: `Case-insensitive substring of ${what}; trimmed, ${MIN_SEARCH_TERM_LENGTH}–${MAX_LIST_SEARCH_LENGTH} characters (422 otherwise); % and _ are literal.${more}`,
    });

/** A list's `search` on clients: as listSearch, and a number however it is typed (docs/api.md#client-search). */
export const clientSearch = (what: string) =>
  listSearch(
    what,
    " A term of only digits and phone punctuation with at least 3 digits (`0175`, `555-0175`, `(415) 555-0175`) matches the digits of the client's number; the whole term read as a number in the business's country matches that number.",
  );

const ValidationError = z
  .object({
    loc: z.array(z.union([z.string(), z.number()])),
    msg: z.string(),
    type: z.string(),
  })
  .meta({ id: 'ValidationError' });

export const HTTPValidationError = z.object({ detail: z.array(ValidationError) }).meta({ id: 'HTTPValidationError' });

export const ErrorResponse = z.object({ detail: z.string(), request_id: z.string().optional() }).meta({ id: 'ErrorResponse' });

export const UpdateSuccessResponse = z
  .object({ success: z.boolean(), updated: z.number().int(), message: z.string() })
  .meta({ id: 'UpdateSuccessResponse' });
