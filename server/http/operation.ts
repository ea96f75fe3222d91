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
  | 'webhook'; // authenticated by the provider's proof named in `verifiedBy`, checked by route()

/**
 * How route() authenticates an `auth: 'webhook'` operation: after the path, query and body limit
 * (so a bad path is still a 422 and an oversized body a 413), before the handler runs or anything
 * parses the body. Every failure is a 403.
 */
export type WebhookVerifier =
  | 'twilio-signature' // X-Twilio-Signature over the public URL and the form (the handler gets the form)
  | 'sendgrid-signature' // SendGrid's signed Event Webhook (ECDSA over timestamp + raw body)
  | 'inbound-secret'; // `?secret=EMAIL_INBOUND_SECRET` (Inbound Parse is unsigned)

export type Operation<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  R extends z.ZodType = z.ZodType,
  V extends WebhookVerifier | undefined = WebhookVerifier | undefined,
> = {
  operationId: string;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI-style path under /api/v1, e.g. `/businesses/{business_id}/sms`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  auth: AuthMode;
  /** Required with `auth: 'webhook'`, and only there (route() refuses the operation otherwise). */
  verifiedBy?: V;
  params?: P;
  query?: Q;
  body?: B;
  /** Media type of the body; JSON unless a webhook says otherwise. */
  bodyType?: 'application/json' | 'application/x-www-form-urlencoded' | 'multipart/form-data';
  response?: R;
  /** The status of a success: 200 unless the operation creates something (201). */
  successStatus?: 200 | 201;
  /** An upsert: 201 when it created, 200 when it updated; both documented with the response (the handler picks). */
  upsert?: boolean;
  /** A `null` body is a valid 200 (client details of a missing client, docs/api.md#clients-staff-and-locations). */
  nullableResponse?: boolean;
  responseType?: 'application/json' | 'text/xml' | 'text/html';
  /** A 200 that is a file, not JSON: its possible media types (documented as binary strings). */
  binaryResponse?: readonly string[];
  /** Honours the Idempotency-Key header (every POST that creates messages). */
  idempotent?: boolean;
  /** Runs on the decoded JSON before zod, for limits that are not validation errors (413). */
  preValidate?: (raw: unknown) => void;
  /**
   * The body is one file (docs/api.md#mms-uploads), not JSON: multipart/form-data with it in the
   * part `field`, or the bytes themselves with one of `types` as the Content-Type. The handler
   * reads it from `rawBytes`; the wrapper only bounds its size (`maxBodyBytes`).
   */
  fileBody?: { field: string; types: readonly string[]; maxBytes: number };
  /** Documented body when the handler validates it itself (a union chosen by a field). */
  docBody?: z.ZodType;
  /** Body size limit in bytes (413 past it); 10 MiB unless an operation needs less (webhooks). */
  maxBodyBytes?: number;
  /** The 409's body when it says more than `detail` (the collision guard's CollisionResponse). */
  conflictResponse?: z.ZodType;
  /** Statuses besides 200 worth listing in the docs. */
  errors?: number[];
};

export function defineOperation<
  P extends z.ZodType,
  Q extends z.ZodType,
  B extends z.ZodType,
  R extends z.ZodType,
  V extends WebhookVerifier | undefined = undefined,
>(op: Operation<P, Q, B, R, V>): Operation<P, Q, B, R, V> {
  return op;
}
