import { sql } from 'drizzle-orm';
import { fixedStatement } from '@/db/prepared';
import { env } from '@/server/env';
import { AppError } from '@/server/errors';
import {
  resolveApiKey,
  resolveSession,
  sessionCaller,
  sessionTokenHash,
  slideLiveSession,
  type Caller,
  type SlidSession,
} from '@/server/services/auth';
import { abandonRateLimit, countHitsSql, enforceRateLimit, planRateLimit, settleRateLimit } from './rate-limit';

export const SESSION_COOKIE = 'session';

function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined; // malformed percent-encoding: no credential (401), not a crash
      }
    }
  }
  return undefined;
}

/**
 * X-API-KEY, then `Authorization: Bearer`, then the session cookie. A credential that is present
 * but unknown is a 401; it never falls through to the next kind.
 */
export async function authenticate(req: Request): Promise<Caller> {
  const apiKey = req.headers.get('x-api-key');
  if (apiKey !== null) {
    const caller = apiKey ? await resolveApiKey(apiKey) : null;
    if (!caller) throw new AppError('unauthenticated', 'Not authenticated');
    return caller;
  }
  const session = sessionTokenOf(req);
  if (!session) throw new AppError('unauthenticated', 'Not authenticated');
  const caller = await resolveSession(session.token, session.viaCookie);
  if (!caller) throw new AppError('unauthenticated', 'Not authenticated');
  return caller;
}

/**
 * A session's lookup (sliding its expiry) and, when this process cannot decide the rate limit
 * locally, the request's count on the shared row: one statement, one round trip.
 */
const sessionAndCount = fixedStatement<{ tokenHash: string; window: number; delta: number }>(
  (p) => sql`
    with s as (${slideLiveSession(p.tokenHash)}),
    counted as (${countHitsSql(sql`select 'session:' || s.id as scope from s`, p.window, p.delta)})
    select s.id, s.business_id, s.staff_id, (select count from counted) as rate_count from s`,
);

/** Which rate-limit scope a session token had, to plan its next count before looking it up (a hint only). */
const scopeOfToken = new Map<string, string>();
const SCOPE_HINTS_MAX = 10_000;

/**
 * authenticate, then the rate limit (enforceRateLimit), for the REST wrapper: a session (when
 * `sessionAllowed`, i.e. the operation admits one, and the request passes the CSRF check, so a
 * refused request is never counted) is looked up and counted in one statement; API keys are
 * resolved from memory (resolveApiKey) and counted as before. Same answers, same order of checks.
 */
export async function authenticateAndCount(req: Request, sessionAllowed: boolean): Promise<{ caller: Caller; counted: boolean }> {
  const session = req.headers.get('x-api-key') === null ? sessionTokenOf(req) : null;
  if (!session || !sessionAllowed || crossOriginWrite(req, session.viaCookie))
    return { caller: await authenticate(req), counted: false };
  const tokenHash = sessionTokenHash(session.token);
  const plan = planRateLimit(scopeOfToken.get(tokenHash));
  let row: (SlidSession & { rate_count: number | null }) | undefined;
  try {
    [row] = await sessionAndCount<SlidSession & { rate_count: number | null }>({
      tokenHash,
      window: plan.window,
      delta: plan.delta,
    });
  } catch (err) {
    abandonRateLimit(plan);
    throw err;
  }
  if (!row) {
    abandonRateLimit(plan);
    throw new AppError('unauthenticated', 'Not authenticated');
  }
  const caller = sessionCaller(row, session.viaCookie);
  if (scopeOfToken.size >= SCOPE_HINTS_MAX) scopeOfToken.delete(scopeOfToken.keys().next().value!);
  scopeOfToken.set(tokenHash, caller.scope);
  await settleRateLimit(plan, caller.scope, row.rate_count);
  return { caller, counted: true };
}

/** Counts a request already authenticated (authenticateAndCount with `counted: false`). */
export const countRequest = (caller: Caller) => enforceRateLimit(caller.scope);

/** A staff session token: `Authorization: Bearer` first, else the session cookie. */
export function sessionTokenOf(req: Request): { token: string; viaCookie: boolean } | null {
  const bearer = req.headers.get('authorization')?.match(/^Bearer\s+(\S+)$/i)?.[1];
  if (bearer) return { token: bearer, viaCookie: false };
  const cookie = readCookie(req.headers.get('cookie'), SESSION_COOKIE);
  return cookie ? { token: cookie, viaCookie: true } : null;
}

/** The origins this service answers on: its public origin, and the one the request was addressed to. */
function ownOrigins(req: Request): string[] {
  const origins = [env().publicOrigin];
  const host = req.headers.get('x-forwarded-host') ?? req.headers.get('host');
  if (host) {
    const proto = req.headers.get('x-forwarded-proto') ?? new URL(req.url).protocol.replace(':', '');
    origins.push(`${proto}://${host}`);
  }
  return origins;
}

/** Would the CSRF check refuse this request from a session (cookie or not)? */
function crossOriginWrite(req: Request, viaCookie: boolean): boolean {
  if (!viaCookie || req.method === 'GET' || req.method === 'HEAD') return false;
  const origin = req.headers.get('origin');
  return !origin || !ownOrigins(req).includes(origin);
}

/** CSRF: a cookie-authenticated write must come from a page of this service (docs/api.md#csrf). */
export function assertSameOrigin(req: Request, caller: Caller): void {
  if (caller.kind !== 'session') return;
  if (crossOriginWrite(req, caller.viaCookie)) {
    throw new AppError(
      'forbidden',
      'Cross-origin request refused: a cookie-authenticated write needs a same-origin Origin header',
    );
  }
}

export function sessionCookie(token: string, maxAgeSeconds: number): string {
  const secure = env().secureCookies ? '; Secure' : '';
  return `${SESSION_COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
}
