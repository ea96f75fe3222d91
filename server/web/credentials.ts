import { env } from '@/server/env';
import { AppError } from '@/server/errors';
import { mayActFor, resolveApiKey, resolveSession, type Caller } from '@/server/services/auth';
import { enforceRateLimit, giveBackRateLimit } from './rate-limit';

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
 * sessions it mints. The platform key acts for every business and has only its own.
 */
const businessScope = (businessId: number) => `business:${businessId}`;

/**
 * Counts a request already authenticated (REST, each tRPC call, an event stream's opening) against
 * its caller's own limit and then its business's (rate-limit.ts). A refused request spends
 * nothing: one the business's budget refuses gives back the caller's own token.
 */
export async function countRequest(caller: Caller): Promise<void> {
  await enforceRateLimit(caller.scope);
  if (caller.kind === 'platform') return;
  const limit = env().rateLimitPerBusinessPerMinute;
  try {
    await enforceRateLimit(
      businessScope(caller.businessId),
      limit,
      `Rate limit of ${limit} requests per minute for this business (all its API keys and sessions together) exceeded`,
    );
  } catch (err) {
    giveBackRateLimit(caller.scope);
    throw err;
  }
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
