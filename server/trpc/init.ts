import { initTRPC, TRPCError } from '@trpc/server';
import superjson from 'superjson';
import { ZodError } from 'zod';
import { AppError, isDatabaseUnavailable } from '@/server/errors';
import { assertSameOrigin, sessionTokenOf } from '@/server/http/credentials';
import { logger } from '@/server/logger';
import { resolveSession, type Caller } from '@/server/services/auth';

type SessionCaller = Extract<Caller, { kind: 'session' }>;

/** tRPC context: the request and, when a staff session is present, the staff caller. */
export async function createContext({ req }: { req: Request }) {
  const session = sessionTokenOf(req);
  const caller = session ? ((await resolveSession(session.token, session.viaCookie)) as SessionCaller | null) : null;
  return { req, caller };
}

export type Context = Awaited<ReturnType<typeof createContext>>;

const TRPC_CODE = {
  validation: 'UNPROCESSABLE_CONTENT',
  bad_request: 'BAD_REQUEST',
  unauthenticated: 'UNAUTHORIZED',
  forbidden: 'FORBIDDEN',
  not_found: 'NOT_FOUND',
  conflict: 'CONFLICT',
  payload_too_large: 'PAYLOAD_TOO_LARGE',
  rate_limited: 'TOO_MANY_REQUESTS',
  unavailable: 'SERVICE_UNAVAILABLE',
  not_configured: 'SERVICE_UNAVAILABLE',
} as const satisfies Record<AppError['code'], TRPCError['code']>;

const t = initTRPC.context<Context>().create({
  transformer: superjson,
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    return {
      ...shape,
      data: {
        ...shape.data,
        stack: undefined,
        zodError: cause instanceof ZodError ? cause.flatten() : null,
        issues: cause instanceof AppError ? (cause.extra.issues ?? null) : null,
      },
    };
  },
});

/** Services throw AppError; the inbox sees the matching tRPC code. */
const mapErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok) {
    const cause = result.error.cause;
    if (cause instanceof AppError) throw new TRPCError({ code: TRPC_CODE[cause.code], message: cause.message, cause });
    if (isDatabaseUnavailable(cause)) throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'Database unavailable', cause });
    if (result.error.code === 'INTERNAL_SERVER_ERROR') logger.error({ err: cause ?? result.error }, 'trpc internal error');
  }
  return result;
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure.use(mapErrors);

/** A signed-in staff member; mutations also pass the same-origin (CSRF) check. */
export const staffProcedure = publicProcedure.use(({ ctx, type, next }) => {
  if (!ctx.caller) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Not authenticated' });
  if (type === 'mutation') {
    try {
      assertSameOrigin(ctx.req, ctx.caller);
    } catch (err) {
      throw new TRPCError({ code: 'FORBIDDEN', message: (err as Error).message });
    }
  }
  return next({ ctx: { ...ctx, caller: ctx.caller } });
});
