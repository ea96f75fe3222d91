import { initTRPC, TRPCError } from '@trpc/server';
import superjson from 'superjson';
import { ZodError } from 'zod';
import { AppError, isDatabaseUnavailable } from '@/server/errors';
import { assertSameOrigin, countRequest, sessionTokenOf } from '@/server/web/credentials';
import { requestIdOf } from '@/server/web/request-id';
import { assertStorableText } from '@/server/web/storable-text';
import { logger } from '@/server/logger';
import { resolveSession, type Caller } from '@/server/services/auth';

type SessionCaller = Extract<Caller, { kind: 'session' }>;

/**
 * tRPC context: the request, its id (the caller's X-Request-Id when well-formed, as over REST) and,
 * when a staff session is present, the staff caller.
 */
export async function createContext({ req, requestId = requestIdOf(req) }: { req: Request; requestId?: string }) {
  const session = sessionTokenOf(req);
  let caller: SessionCaller | null = null;
  try {
    caller = session ? ((await resolveSession(session.token, session.viaCookie)) as SessionCaller | null) : null;
  } catch (err) {
    // The session is looked up before any procedure runs, so its middleware's mapping never sees this.
    if (isDatabaseUnavailable(err))
      throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'Database unavailable', cause: err });
    throw err;
  }
  return { req, requestId, caller };
}

type Context = Awaited<ReturnType<typeof createContext>>;

const TRPC_CODE = {
  validation: 'UNPROCESSABLE_CONTENT',
  bad_request: 'BAD_REQUEST',
  unauthenticated: 'UNAUTHORIZED',
  forbidden: 'FORBIDDEN',
  not_found: 'NOT_FOUND',
  conflict: 'CONFLICT',
  payload_too_large: 'PAYLOAD_TOO_LARGE',
  unsupported_media_type: 'UNSUPPORTED_MEDIA_TYPE',
  rate_limited: 'TOO_MANY_REQUESTS',
  // tRPC has no 507, and no upload comes in by tRPC (the composer uploads over REST).
  insufficient_storage: 'FORBIDDEN',
  unavailable: 'SERVICE_UNAVAILABLE',
  not_configured: 'SERVICE_UNAVAILABLE',
} as const satisfies Record<AppError['code'], TRPCError['code']>;

const t = initTRPC.context<Context>().create({
  transformer: superjson,
  errorFormatter({ shape, error, ctx }) {
    const cause = error.cause;
    // An internal fault reaches the browser as a generic message and the request id that finds it
    // in the logs; its own message (a database error carries SQL and parameters) stays server-side.
    const internal = error.code === 'INTERNAL_SERVER_ERROR';
    return {
      ...shape,
      message: internal ? `Internal error (request ${ctx?.requestId ?? 'unknown'})` : shape.message,
      data: {
        ...shape.data,
        stack: undefined,
        requestId: ctx?.requestId,
        zodError: cause instanceof ZodError ? cause.flatten() : null,
        issues: cause instanceof AppError ? (cause.extra.issues ?? null) : null,
        // The REST body's fields beside `detail` (the collision guard's new_message_ids).
        fields: cause instanceof AppError ? (cause.extra.fields ?? null) : null,
      },
    };
  },
});

/** Services throw AppError; the inbox sees the matching tRPC code. */
const mapErrors = t.middleware(async ({ ctx, next }) => {
  const result = await next();
  if (!result.ok) {
    const cause = result.error.cause;
    if (cause instanceof AppError) throw new TRPCError({ code: TRPC_CODE[cause.code], message: cause.message, cause });
    if (isDatabaseUnavailable(cause))
      throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'Database unavailable', cause });
    if (result.error.code === 'INTERNAL_SERVER_ERROR')
      logger.error({ err: cause ?? result.error, request_id: ctx.requestId }, 'trpc internal error');
  }
  return result;
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
/**
 * Input text PostgreSQL cannot store (U+0000, lone surrogates) is refused before any procedure
 * runs, as over REST: UNPROCESSABLE_CONTENT naming the field, never a database error.
 */
const storableInput = t.middleware(async ({ getRawInput, next }) => {
  assertStorableText('body', await getRawInput());
  return next();
});

const publicProcedure = t.procedure.use(mapErrors).use(storableInput);

/**
 * A signed-in staff member; every call counts against the session's rate limit and its business's,
 * the same ones as REST (each call of a batch once; a subscription once per connection); mutations also pass the
 * same-origin (CSRF) check.
 */
export const staffProcedure = publicProcedure.use(async ({ ctx, type, next }) => {
  if (!ctx.caller) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Not authenticated' });
  await countRequest(ctx.caller);
  if (type === 'mutation') {
    try {
      assertSameOrigin(ctx.req, ctx.caller);
    } catch (err) {
      throw new TRPCError({ code: 'FORBIDDEN', message: (err as Error).message });
    }
  }
  return next({ ctx: { ...ctx, caller: ctx.caller } });
});
