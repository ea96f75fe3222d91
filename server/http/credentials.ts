import { sql } from 'drizzle-orm';
import { fixedStatement } from '@/db/prepared';
import { env } from '@/server/env';
import { AppError } from '@/server/errors';
import {
  mayActFor,
  resolveApiKey,
  resolveSession,
  sessionCaller,
  sessionTokenHash,
  slideLiveSession,
  type Caller,
  type SlidSession,
} from '@/server/services/auth';
import { abandonRateLimit, countHitsSql, enforceRateLimit, planRateLimit, recordRateLimit, settleRateLimit } from './rate-limit';

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
 * The budget every API key and session of a business shares, on top of each one's own: sessions
 * are cheap to mint (POST /auth/token), so without it a key could multiply its requests by the
 * sessions it mints. The platform key acts for every business and has only its own. The scope's
 * text is also built in sessionAndCount's SQL ('business:' || business_id).
 */
export const businessScope = (businessId: number) => `business:${businessId}`;
const businessLimited = (limit: number) =>
  `Rate limit of ${limit} requests per minute for this business (all its API keys and sessions together) exceeded`;

/**
 * A session's lookup (sliding its expiry) and, when this process cannot decide the rate limits
 * locally, the request's count on the shared rows: the session's own and its business's (counted
 * only when the session's own count, if read here, is within `limit`: a request refused by its own
 * limit does not spend its business's budget). One statement, one round trip.
 */
const sessionAndCount = fixedStatement<{
  tokenHash: string;
  window: number;
  delta: number;
  limit: number;
  businessWindow: number;
  businessDelta: number;
}>(
  (p) => sql`
    with s as (${slideLiveSession(p.tokenHash)}),
    counted as (${countHitsSql(sql`select 'session:' || s.id as scope from s`, p.window, p.delta)}),
    business_counted as (${countHitsSql(
      sql`select 'business:' || s.business_id as scope from s where coalesce((select count from counted), 0) <= ${p.limit}::int`,
      p.businessWindow,
      p.businessDelta,
    )})
    select s.id, s.business_id, s.staff_id, (select count from counted) as rate_count,
      (select count from business_counted) as business_count
    from s`,
);

/** Which rate-limit scopes a session token had (its own, its business's), to plan its next count before looking it up (a hint only). */
const scopesOfToken = new Map<string, { own: string; business: string }>();
const SCOPE_HINTS_MAX = 10_000;

/**
 * authenticate, then the rate limits (countRequest), for the REST wrapper: a session (when
 * `sessionAllowed`, i.e. the operation admits one, and the request passes the CSRF check, so a
 * refused request is never counted) is looked up and counted in one statement; API keys are
 * resolved from memory (resolveApiKey) and counted as before. Same answers, same order of checks.
 */
export async function authenticateAndCount(req: Request, sessionAllowed: boolean): Promise<{ caller: Caller; counted: boolean }> {
  const session = req.headers.get('x-api-key') === null ? sessionTokenOf(req) : null;
  if (!session || !sessionAllowed || crossOriginWrite(req, session.viaCookie))
    return { caller: await authenticate(req), counted: false };
  const tokenHash = sessionTokenHash(session.token);
  const { rateLimitPerMinute: limit, rateLimitPerBusinessPerMinute: businessLimit } = env();
  const hint = scopesOfToken.get(tokenHash);
  const plan = planRateLimit(hint?.own, limit);
  const businessPlan = planRateLimit(hint?.business, businessLimit);
  const abandon = () => {
    abandonRateLimit(plan);
    abandonRateLimit(businessPlan);
  };
  let row: (SlidSession & { rate_count: number | null; business_count: number | null }) | undefined;
  try {
    [row] = await sessionAndCount<SlidSession & { rate_count: number | null; business_count: number | null }>({
      tokenHash,
      window: plan.window,
      delta: plan.delta,
      limit,
      // Planned a moment apart: at a minute's turn the two may fall in different windows.
      businessWindow: businessPlan.window,
      businessDelta: businessPlan.delta,
    });
  } catch (err) {
    abandon();
    throw err;
  }
  if (!row) {
    abandon();
    throw new AppError('unauthenticated', 'Not authenticated');
  }
  const caller = sessionCaller(row, session.viaCookie);
  const business = businessScope(row.business_id);
  if (scopesOfToken.size >= SCOPE_HINTS_MAX) scopesOfToken.delete(scopesOfToken.keys().next().value!);
  scopesOfToken.set(tokenHash, { own: caller.scope, business });
  try {
    await settleRateLimit(plan, caller.scope, row.rate_count, limit);
  } catch (err) {
    // Refused by its own limit (the statement then did not count it for the business), or the
    // database failed: the business's side is only recorded.
    recordRateLimit(businessPlan, business, row.business_count);
    throw err;
  }
  await settleRateLimit(businessPlan, business, row.business_count, businessLimit, businessLimited(businessLimit));
  return { caller, counted: true };
}

/**
 * Counts a request already authenticated (authenticateAndCount with `counted: false`, tRPC, the
 * event stream): against the caller's own limit, then, if it passed, its business's.
 */
export async function countRequest(caller: Caller): Promise<void> {
  await enforceRateLimit(caller.scope);
  if (caller.kind === 'platform') return;
  const limit = env().rateLimitPerBusinessPerMinute;
  await enforceRateLimit(businessScope(caller.businessId), limit, businessLimited(limit));
}

/**
 * POST /auth/token's cap: sessions minted per business per minute (AUTH_TOKENS_PER_BUSINESS_PER_MINUTE),
 * whoever asks. Counted only for a business the caller may act for: another business's cap is not
 * the caller's to spend (issueSession answers that with a 403).
 */
export async function countSessionMint(caller: Caller, businessId: number): Promise<void> {
  if (!mayActFor(caller, businessId)) return;
  const limit = env().authTokensPerBusinessPerMinute;
  await enforceRateLimit(
    `auth-token:${businessId}`,
    limit,
    `At most ${limit} sessions per business per minute can be created (POST /auth/token)`,
  );
}

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
