/**
 * The one error type services throw. The REST wrapper maps `code` to an HTTP status and body
 * (docs/api.md#errors); the tRPC middleware maps it to a TRPCError. Services never know which door they came in by.
 */
export type ErrorLocation = ['path' | 'query' | 'body' | 'header', ...(string | number)[]];
export type ValidationIssue = { loc: ErrorLocation; msg: string; type: string };

type AppErrorCode =
  | 'validation' // 422
  | 'bad_request' // 400
  | 'unauthenticated' // 401
  | 'forbidden' // 403
  | 'not_found' // 404
  | 'conflict' // 409
  | 'payload_too_large' // 413
  | 'unsupported_media_type' // 415
  | 'rate_limited' // 429
  | 'insufficient_storage' // 507, a business's uploads at their storage quota
  | 'unavailable' // 503
  | 'not_configured'; // 503, a feature whose provider is not set up

export const HTTP_STATUS: Record<AppErrorCode, number> = {
  validation: 422,
  bad_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  insufficient_storage: 507,
  unavailable: 503,
  not_configured: 503,
};

export class AppError extends Error {
  constructor(
    readonly code: AppErrorCode,
    message: string,
    readonly extra: {
      issues?: ValidationIssue[];
      retryAfterSeconds?: number;
      /** More fields of the answer's body beside `detail` (the collision guard's `new_message_ids`). */
      fields?: Record<string, unknown>;
    } = {},
  ) {
    super(message);
    this.name = 'AppError';
  }

  /** A 422 for one field, e.g. `AppError.invalid(['body', 'client_id'], 'Client 7 not found')`. */
  static invalid(loc: ErrorLocation, msg: string, type = 'value_error'): AppError {
    return new AppError('validation', msg, { issues: [{ loc, msg, type }] });
  }

  static notFound(what: string): AppError {
    return new AppError('not_found', `${what} not found`);
  }
}

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up / shutting down)
  '08000',
  '08003',
  '08006',
]);

/** True when an error means "the database cannot be reached", which is a 503, not a bug. */
export function isDatabaseUnavailable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
    const errors = (e as { errors?: unknown[] }).errors; // AggregateError from a multi-address connect
    if (Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
