import type { z } from 'zod';
import { db, type Tx } from '@/server/db/client';
import { AppError, HTTP_STATUS, isDatabaseUnavailable } from '@/server/errors';
import { logger, type Logger } from '@/server/logger';
import { assertBusinessAccess, assertPlatform, type Caller } from '@/server/services/auth';
import { assertSameOrigin, authenticate, countRequest } from '@/server/web/credentials';
import type { Operation, WebhookVerifier } from './operation';
import { withIdempotency } from './idempotency';
import { requestIdOf } from '@/server/web/request-id';
import { logRequest } from '@/server/web/access-log';
import { assertStorableText } from '@/server/web/storable-text';
import { groupPairs } from '@/server/lib/pairs';
import { readCapped } from '@/server/lib/read-capped';
import { verifyInboundEmailSecret, verifySendgridSignature } from '@/server/providers/sendgrid-signature';
import { verifyTwilioSignature, type VerifiedForm } from '@/server/providers/twilio-signature';
import { parseOrThrow } from './validation';

export const MAX_BODY_BYTES = 10 * 1024 * 1024;

type Out<T> = T extends z.ZodType ? z.output<T> : undefined;

type HandlerContext<P, Q, B, V = undefined> = {
  req: Request;
  requestId: string;
  log: Logger;
  params: Out<P>;
  query: Out<Q>;
  body: Out<B>;
  /** Undefined only for `auth: 'none' | 'webhook'` operations. */
  caller: Caller;
  /** The raw body text (webhooks verify signatures over it). */
  rawBody: string;
  /** The raw body bytes (multipart uploads, signatures over exact bytes). */
  rawBytes: Buffer;
  /** The signed form, cleaned to be storable: `verifiedBy: 'twilio-signature'` operations only. */
  form: V extends 'twilio-signature' ? VerifiedForm : undefined;
  /**
   * Where the handler's statements run: with an Idempotency-Key, the transaction its effects and
   * its stored response commit in together; otherwise the pool. Pass it to every service call.
   */
  tx: Tx;
};

type RouteContext = { params: Promise<Record<string, string | string[]>> };

/**
 * The REST wrapper: request id → auth → CSRF → rate limit → path (→ tenancy) → query → body →
 * handler → JSON. A webhook (`auth: 'webhook'`) has no caller: its provider's proof (`verifiedBy`)
 * is checked once the body is read, before the handler. Every failure becomes the status
 * and body of docs/api.md#errors; nothing escapes as an unformatted 500.
 */
export function route<
  P extends z.ZodType,
  Q extends z.ZodType,
  B extends z.ZodType,
  R extends z.ZodType,
  V extends WebhookVerifier | undefined = undefined,
>(
  op: Operation<P, Q, B, R, V>,
  handler: (ctx: HandlerContext<P, Q, B, V>) => Promise<(R extends z.ZodType ? z.input<R> : unknown) | null | Response>,
) {
  // A webhook without a verifier would be open to anyone; a verifier elsewhere would be ignored.
  if ((op.auth === 'webhook') !== (op.verifiedBy !== undefined)) {
    throw new Error(`Operation ${op.operationId}: \`verifiedBy\` goes with \`auth: 'webhook'\`, and only with it`);
  }
  return async (req: Request, routeCtx?: RouteContext): Promise<Response> => {
    const started = performance.now();
    const requestId = requestIdOf(req);
    const log = logger.child({ request_id: requestId });
    let response: Response;
    try {
      response = await run(req, routeCtx, op, handler, requestId, log);
    } catch (err) {
      response = errorResponse(err, requestId, log);
    }
    response.headers.set('X-Request-Id', requestId);
    // The one line a REST request logs (Next.js's own request log is off: next.config.mjs).
    logRequest(log, req.method, req.url, response.status, started);
    return response;
  };
}

async function run<
  P extends z.ZodType,
  Q extends z.ZodType,
  B extends z.ZodType,
  R extends z.ZodType,
  V extends WebhookVerifier | undefined,
>(
  req: Request,
  routeCtx: RouteContext | undefined,
  op: Operation<P, Q, B, R, V>,
  handler: (ctx: HandlerContext<P, Q, B, V>) => Promise<unknown>,
  requestId: string,
  log: Logger,
): Promise<Response> {
  let caller: Caller | undefined;
  if (op.auth !== 'none' && op.auth !== 'webhook') {
    caller = await authenticate(req);
    if (op.auth !== 'any' && caller.kind === 'session') throw new AppError('forbidden', 'Requires an API key');
    if (op.auth === 'platform') assertPlatform(caller);
    assertSameOrigin(req, caller);
    await countRequest(caller);
  }

  const rawParams = (await routeCtx?.params) ?? {};
  assertStorableText('path', rawParams);
  const params = op.params ? parsePath(op.params, rawParams) : undefined;
  const businessId = (params as { business_id?: unknown } | undefined)?.business_id;
  if (caller && typeof businessId === 'number') await assertBusinessAccess(caller, businessId);

  const url = new URL(req.url);
  let query: unknown;
  if (op.query) {
    // A key given more than once becomes an array, in one linear pass.
    const rawQuery = groupPairs(url.searchParams);
    assertStorableText('query', rawQuery);
    query = parseOrThrow('query', op.query, rawQuery);
  }

  // A secret in the URL proves an Inbound Parse post without its body: checked before the body
  // (up to 30 MB of email) is read, so a post without it costs nothing.
  // The query, when the operation declares one, was validated above: `secret` is given at most once.
  if (op.verifiedBy === 'inbound-secret') verifyInboundEmailSecret(url.searchParams.get('secret') ?? undefined);

  let rawBytes: Buffer = Buffer.alloc(0);
  let body: unknown;
  if (req.method !== 'GET' && req.method !== 'HEAD') rawBytes = await readBody(req, op.maxBodyBytes ?? MAX_BODY_BYTES);
  const rawBody = rawBytes.toString('utf8');
  // Signed webhooks are verified here and parse their own raw body (form, multipart or JSON) in the
  // handler: an unsigned body is a 403 whatever it holds, and costs no parsing. Every other body is JSON.
  const form =
    op.verifiedBy && op.verifiedBy !== 'inbound-secret' ? verifySignature(op.verifiedBy, req, rawBody, rawBytes) : undefined;
  if (req.method !== 'GET' && req.method !== 'HEAD' && op.auth !== 'webhook' && (op.body || op.docBody)) {
    const decoded = decodeJsonBody(req, rawBody);
    op.preValidate?.(decoded);
    assertStorableText('body', decoded);
    body = op.body ? parseOrThrow('body', op.body, decoded) : decoded;
  }

  const invoke = async (tx: Tx): Promise<Response> => {
    const result = await handler({
      req,
      requestId,
      log,
      params: params as never,
      query: query as never,
      body: body as never,
      caller: caller as Caller,
      rawBody,
      rawBytes,
      form: form as never,
      tx,
    });
    if (result instanceof Response) return result;
    return json(op.successStatus ?? 200, result === undefined ? null : result);
  };
  if (op.idempotent && caller) {
    // Errors inside become stored responses (a 409 replays as a 409); 5xx are never stored.
    return withIdempotency(req, caller, rawBody, (tx) => invoke(tx).catch((err) => errorResponse(err, requestId, log)));
  }
  return invoke(db);
}

/** A signed webhook's proof over its body (403 when it fails); a Twilio form comes back verified and cleaned. */
function verifySignature(
  by: Exclude<WebhookVerifier, 'inbound-secret'>,
  req: Request,
  rawBody: string,
  rawBytes: Buffer,
): VerifiedForm | undefined {
  if (by === 'twilio-signature') return verifyTwilioSignature(req, rawBody);
  verifySendgridSignature(req, rawBytes);
  return undefined;
}

/**
 * Path parameters (docs/api.md#conventions). A positive integer past 2147483647 is well formed but
 * names nothing that can exist, so it is a 404 like any unknown id; anything that is not a positive
 * integer in plain digits (`0`, `-4`, `1.5`, `abc`) is a 422 naming the parameter (idParam in
 * server/schemas/common.ts).
 */
function parsePath<P extends z.ZodType>(schema: P, raw: Record<string, string | string[]>): z.output<P> {
  try {
    return parseOrThrow('path', schema, raw);
  } catch (err) {
    const issues = err instanceof AppError ? (err.extra.issues ?? []) : [];
    const outOfRange = issues.length > 0 && issues.every((i) => i.type === 'too_big');
    if (outOfRange) {
      const name = String(issues[0]!.loc[1] ?? 'resource').replace(/_id$/, '');
      throw new AppError('not_found', `${name.charAt(0).toUpperCase()}${name.slice(1)} not found`);
    }
    throw err;
  }
}

export function json(status: number, payload: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(payload), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

/** A 200 whose JSON text is already written (answers PostgreSQL built: the lists and message pages). */
export function jsonText(body: string): Response {
  return new Response(body, { status: 200, headers: { 'Content-Type': 'application/json' } });
}

/** Reads the body, refusing (413) past `limit` bytes without buffering the rest. */
export async function readBody(req: Request, limit: number): Promise<Buffer> {
  const tooLarge = () => new AppError('payload_too_large', `Request body exceeds ${describeBytes(limit)}`);
  const declared = Number(req.headers.get('content-length') ?? '0');
  if (declared > limit) throw tooLarge();
  const bytes = await readCapped(req.body, limit);
  if (bytes === null) throw tooLarge();
  return bytes;
}

const describeBytes = (n: number) => (n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : `${Math.round(n / 1024)} KiB`);

function decodeJsonBody(req: Request, raw: string): unknown {
  const contentType = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  // An empty body with no declared type reads as {} so all-optional bodies may be omitted.
  if (raw.trim() === '' && contentType === '') return {};
  if (contentType !== 'application/json' && !contentType.endsWith('+json')) {
    throw new AppError('bad_request', 'Content-Type must be application/json');
  }
  try {
    return JSON.parse(raw);
  } catch {
    throw new AppError('bad_request', 'Request body is not valid JSON');
  }
}

export function errorResponse(err: unknown, requestId: string, log: Logger): Response {
  if (err instanceof AppError) {
    const status = HTTP_STATUS[err.code];
    if (err.code === 'validation') return json(status, { detail: err.extra.issues ?? [] });
    const headers: Record<string, string> = {};
    if (err.extra.retryAfterSeconds !== undefined) headers['Retry-After'] = String(err.extra.retryAfterSeconds);
    return json(status, { detail: err.message, ...err.extra.fields }, headers);
  }
  if (isDatabaseUnavailable(err)) {
    log.warn({ err: { message: (err as Error).message, code: (err as { code?: string }).code } }, 'database unavailable');
    return json(
      503,
      { detail: 'Service temporarily unavailable: the database cannot be reached', request_id: requestId },
      { 'Retry-After': '5' },
    );
  }
  log.error({ err }, 'internal error');
  return json(500, { detail: 'Internal error', request_id: requestId });
}
