import { z } from 'zod';

/** Positive integer id, as it arrives in a path or query string ("12") or in JSON (12). */
export const id = z.coerce.number({ error: 'must be a positive integer' }).int('must be a positive integer').positive('must be a positive integer');

/** `true`/`false` (also `1`/`0`) in a query string; z.coerce.boolean would read "false" as true. */
export const queryBoolean = z
  .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1');

/**
 * A timestamp in: any ISO 8601 with an offset; without one it is read as UTC (SPEC §2).
 * Comes out as a Date.
 */
export const isoTimestamp = z
  .string()
  .trim()
  .regex(
    /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$/i,
    'must be an ISO 8601 timestamp',
  )
  .transform((v, ctx) => {
    const hasOffset = /(Z|[+-]\d{2}(:?\d{2})?)$/i.test(v) && /[T ]/.test(v);
    const normalised = v.replace(' ', 'T');
    const date = new Date(hasOffset ? normalised : `${normalised.includes('T') ? normalised : `${normalised}T00:00:00`}Z`);
    if (Number.isNaN(date.getTime())) {
      ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 timestamp' });
      return z.NEVER;
    }
    return date;
  })
  .meta({ type: 'string', format: 'date-time' });

/** Timestamps out: ISO 8601 UTC with milliseconds. */
export const timestampOut = z.string().meta({ format: 'date-time', example: '2026-11-20T14:03:05.123Z' });

export const paginationQuery = {
  page: z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(1).default(1),
  page_size: z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(1).max(100).default(25),
};

export const businessPath = z.object({ business_id: id });

/** SPEC §2.1, §8: a search term has at least 3 characters once trimmed (shorter ones cannot use a trigram index). */
export const MIN_SEARCH_TERM_LENGTH = 3;
/** The 422 message of a term under MIN_SEARCH_TERM_LENGTH, shared by the query schemas and the services. */
export const SEARCH_TERM_TOO_SHORT = `must be at least ${MIN_SEARCH_TERM_LENGTH} characters`;

/** The `search` parameter of the conversation, client and staff lists: trimmed, 3–100 characters (SPEC §2.1, §8). */
export const listSearch = (what: string) =>
  z
    .string()
    .trim()
    .min(MIN_SEARCH_TERM_LENGTH, SEARCH_TERM_TOO_SHORT)
    .max(100)
    .meta({ description: `Case-insensitive substring of ${what}; trimmed, ${MIN_SEARCH_TERM_LENGTH}–100 characters (422 otherwise); % and _ are literal.` });

export const ValidationError = z
  .object({
    loc: z.array(z.union([z.string(), z.number()])),
    msg: z.string(),
    type: z.string(),
  })
  .meta({ id: 'ValidationError' });

export const HTTPValidationError = z.object({ detail: z.array(ValidationError) }).meta({ id: 'HTTPValidationError' });

export const ErrorResponse = z
  .object({ detail: z.string(), request_id: z.string().optional() })
  .meta({ id: 'ErrorResponse' });

export const UpdateSuccessResponse = z
  .object({ success: z.boolean(), updated: z.number().int(), message: z.string() })
  .meta({ id: 'UpdateSuccessResponse' });
