import type { z } from 'zod';

/**
 * A REST operation's contract: path, method, auth and the zod schemas that both validate requests
 * (server/http/route.ts) and generate the OpenAPI document (server/http/openapi.ts). One object,
 * two uses, so the documentation cannot drift from what is enforced.
 */
type AuthMode =
  | 'none' // health, docs, login
  | 'any' // API key (platform or business) or a staff session
  | 'api_key' // platform or business key only
  | 'platform' // the platform key only
  | 'webhook'; // authenticated by a provider signature inside the handler

export type Operation<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
> = {
  operationId: string;
  method: 'get' | 'post';
  /** OpenAPI-style path under /api/v1, e.g. `/businesses/{business_id}/sms`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  auth: AuthMode;
  params?: P;
  query?: Q;
  body?: B;
  /** Media type of the body; JSON unless a webhook says otherwise. */
  bodyType?: 'application/json' | 'application/x-www-form-urlencoded' | 'multipart/form-data';
  response?: R;
  /** A `null` body is a valid 200 (client details of a missing client, SPEC §2). */
  nullableResponse?: boolean;
  responseType?: 'application/json' | 'text/xml' | 'text/html';
  /** Honours the Idempotency-Key header (every POST that creates messages). */
  idempotent?: boolean;
  /** Runs on the decoded JSON before zod, for limits that are not validation errors (413). */
  preValidate?: (raw: unknown) => void;
  /** Documented body when the handler validates it itself (a union chosen by a field). */
  docBody?: z.ZodType;
  /** Body size limit in bytes (413 past it); 10 MiB unless an operation needs less (webhooks). */
  maxBodyBytes?: number;
  /** Statuses besides 200 worth listing in the docs. */
  errors?: number[];
};

export function defineOperation<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType>(
  op: Operation<P, Q, B, R>,
): Operation<P, Q, B, R> {
  return op;
}
