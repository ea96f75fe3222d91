import { createHmac, timingSafeEqual } from 'node:crypto';
import { and, eq, isNull, or, sql } from 'drizzle-orm';
import { equalsAny } from '@/db/sql-array';
import { db, type Tx } from '@/server/db/client';
import { fixedStatement } from '@/server/db/prepared';
import { apiKeys, businesses, loginCodes, sessions, staff } from '@/db/schema';
import { env } from '@/server/env';
import { AppError } from '@/server/errors';
import { SESSION_TTL } from '@/server/schemas/auth';
import { newBusinessApiKey, newSecretToken, sha256 } from '@/server/lib/secret-tokens';
import { TtlCache } from '@/server/lib/ttl-cache';
import { isActiveStaff, requireStaff } from './directory';

/** Who is calling: resolved once per request by the transport, then passed to services. */
export type Caller =
  | { kind: 'platform'; scope: string }
  | { kind: 'business_key'; scope: string; businessId: number; apiKeyId: number }
  | { kind: 'session'; scope: string; businessId: number; staffId: number; sessionId: number; viaCookie: boolean };

/** Session tokens and login codes are hashed with a server secret, so a leaked table alone cannot be replayed. */
const hashSessionToken = (token: string) => createHmac('sha256', env().sessionSecret).update(token).digest('hex');

/** How long a login link works: long enough to click it, short enough that an old one is dead. */
export const LOGIN_CODE_TTL_SECONDS = 600;

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Per-process memory of lookups every authenticated request repeats: which business an API key
 * belongs to, and which businesses exist. Only positive answers are kept, for TTL_CACHE_MS, so
 * a key revoked in the database (or a business removed) is refused at most that long after; an
 * unknown key is looked up every time.
 */
const businessKeys = new TtlCache<Extract<Caller, { kind: 'business_key' }>>();
const existingBusinesses = new TtlCache<true>();
let platformKeyHash: { key: string; hash: string } | undefined;

/** An X-API-KEY value → the platform or a business, or null when unknown/revoked (cached briefly, see TtlCache). */
export async function resolveApiKey(key: string, tx: Tx = db): Promise<Caller | null> {
  const hash = sha256(key);
  const platformKey = env().platformApiKey;
  if (platformKey) {
    if (platformKeyHash?.key !== platformKey) platformKeyHash = { key: platformKey, hash: sha256(platformKey) };
    if (sameHash(hash, platformKeyHash.hash)) return { kind: 'platform', scope: `platform:${hash.slice(0, 16)}` };
  }
  const cached = businessKeys.get(hash);
  if (cached) return cached;
  const [row] = await tx
    .select({ id: apiKeys.id, businessId: apiKeys.businessId })
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)))
    .limit(1);
  if (!row) return null;
  const caller = { kind: 'business_key', scope: `key:${row.id}`, businessId: row.businessId, apiKeyId: row.id } as const;
  businessKeys.set(hash, caller);
  return caller;
}

/**
 * The live session with this token hash, its expiry slid to now + ttl, as rows (id, business_id,
 * staff_id): expired, revoked or unknown tokens, and staff who were deactivated, give none.
 */
const slideLiveSession = (tokenHash: unknown) => sql`
  update ${sessions} set expires_at = now() + make_interval(secs => ${sessions.ttlSeconds}), last_used_at = now()
  where ${sessions.tokenHash} = ${tokenHash} and ${sessions.revokedAt} is null and ${sessions.expiresAt} > now()
    and exists (select 1 from ${staff} where ${staff.id} = ${sessions.staffId} and ${isActiveStaff()})
  returning ${sessions.id} as id, ${sessions.businessId} as business_id, ${sessions.staffId} as staff_id`;

type SlidSession = { id: number; business_id: number; staff_id: number };

/** A row of slideLiveSession as the caller it authenticates. */
const sessionCaller = (row: SlidSession, viaCookie: boolean): Caller => ({
  kind: 'session',
  scope: `session:${row.id}`,
  businessId: row.business_id,
  staffId: row.staff_id,
  sessionId: row.id,
  viaCookie,
});

// Prepared and rendered once (server/db/prepared.ts): one round trip per authenticated inbox request.
const slideStatement = fixedStatement<{ tokenHash: string }>((p) => slideLiveSession(p.tokenHash));

/**
 * A session token → its staff member, sliding the expiry to now + ttl in the same statement.
 * Expired, revoked or unknown tokens, and staff who were deactivated, give null.
 */
export async function resolveSession(token: string, viaCookie: boolean, tx: Tx = db): Promise<Caller | null> {
  const tokenHash = hashSessionToken(token);
  const [row] = await slideStatement<SlidSession>({ tokenHash }, '', tx);
  return row ? sessionCaller(row, viaCookie) : null;
}

/** A live session, on `sessions` joined to its `staff`: not revoked, not expired, its staff member active. */
const liveSessionOfActiveStaff = () => and(isNull(sessions.revokedAt), sql`${sessions.expiresAt} > now()`, isActiveStaff());

/** Is this session still live (not revoked, not expired, its staff member active)? Does not slide it. */
export async function sessionIsLive(sessionId: number, tx: Tx = db): Promise<boolean> {
  return (await liveSessionIds([sessionId], tx)).has(sessionId);
}

/** Which of these sessions are still live (not revoked or expired, staff member active): one query for many. */
export async function liveSessionIds(sessionIds: number[], tx: Tx = db): Promise<Set<number>> {
  if (sessionIds.length === 0) return new Set();
  const rows = await tx
    .select({ id: sessions.id })
    .from(sessions)
    .innerJoin(staff, eq(staff.id, sessions.staffId))
    .where(and(equalsAny(sessions.id, sessionIds, 'int'), liveSessionOfActiveStaff()));
  return new Set(rows.map((r) => r.id));
}

/**
 * The tenancy rule, written once: the platform may act for any business, a business key or a
 * session only for its own.
 */
export const mayActFor = (caller: Caller, businessId: number): boolean =>
  caller.kind === 'platform' || caller.businessId === businessId;

/** 403 unless the caller may act for this business (mayActFor); says nothing about whether it exists. */
function assertMayActFor(caller: Caller, businessId: number): void {
  if (!mayActFor(caller, businessId)) throw new AppError('forbidden', 'Not allowed for this business');
}

/**
 * Tenancy: may this caller act on this business? Platform → any existing business (404 otherwise);
 * business key or session → only its own (403 otherwise).
 */
export async function assertBusinessAccess(caller: Caller, businessId: number, tx: Tx = db): Promise<void> {
  assertMayActFor(caller, businessId);
  if (caller.kind !== 'platform' || existingBusinesses.get(String(businessId))) return;
  const [row] = await tx.select({ id: businesses.id }).from(businesses).where(eq(businesses.id, businessId)).limit(1);
  if (!row) throw AppError.notFound('Business');
  existingBusinesses.set(String(businessId), true);
}

export function assertPlatform(caller: Caller): void {
  if (caller.kind !== 'platform') throw new AppError('forbidden', 'Requires the platform API key');
}

export type IssuedSession = { id: number; token: string; expiresAt: Date; businessId: number; staffId: number };

/** POST /auth/token: a staff session for a business the caller may act on (docs/api.md#staff-sessions). */
export async function issueSession(
  caller: Caller,
  input: { business_id: number; staff_id: number; ttl_seconds?: number },
  tx: Tx = db,
): Promise<IssuedSession> {
  assertMayActFor(caller, input.business_id);
  const [business] = await tx.select({ id: businesses.id }).from(businesses).where(eq(businesses.id, input.business_id)).limit(1);
  if (!business) throw AppError.invalid(['body', 'business_id'], `Business ${input.business_id} not found`);
  await requireStaff(input.business_id, input.staff_id, ['body', 'staff_id'], tx);

  const ttl = input.ttl_seconds ?? SESSION_TTL.default;
  const token = newSecretToken();
  const [row] = await tx
    .insert(sessions)
    .values({
      businessId: input.business_id,
      staffId: input.staff_id,
      tokenHash: hashSessionToken(token),
      ttlSeconds: ttl,
      expiresAt: sql`now() + make_interval(secs => ${ttl})`,
    })
    .returning({ id: sessions.id, expiresAt: sessions.expiresAt });
  return { id: row!.id, token, expiresAt: row!.expiresAt, businessId: input.business_id, staffId: input.staff_id };
}

/**
 * POST /session/expire. With an API key a token is required and must belong to a business the key
 * may act on; with a session, an omitted token means the calling session.
 */
export async function expireSession(caller: Caller, accessToken: string | undefined, tx: Tx = db): Promise<number> {
  if (!accessToken) {
    if (caller.kind !== 'session') throw AppError.invalid(['body', 'access_token'], 'Field required with an API key', 'missing');
    return revokeSessionTree(caller.sessionId, tx);
  }
  const tokenHash = hashSessionToken(accessToken);
  const [target] = await tx
    .select({ id: sessions.id, businessId: sessions.businessId, revokedAt: sessions.revokedAt })
    .from(sessions)
    .where(eq(sessions.tokenHash, tokenHash))
    .limit(1);
  // An unknown token and one of another business look the same: nothing to expire here.
  if (!target || !mayActFor(caller, target.businessId) || target.revokedAt) return 0;
  return revokeSessionTree(target.id, tx);
}

/**
 * Revokes a session and the browser sessions its login links opened; answers 1 when the session
 * itself was live (the count UpdateSuccessResponse reports, docs/api.md#staff-sessions), else 0.
 */
async function revokeSessionTree(sessionId: number, tx: Tx): Promise<number> {
  const rows = await tx
    .update(sessions)
    .set({ revokedAt: sql`now()` })
    .where(and(or(eq(sessions.id, sessionId), eq(sessions.parentId, sessionId)), isNull(sessions.revokedAt)))
    .returning({ id: sessions.id });
  return rows.some((r) => r.id === sessionId) ? 1 : 0;
}

/**
 * A one-time login code for a session (what `login_url` carries: never the bearer token itself, so
 * a leaked link is dead once used or after LOGIN_CODE_TTL_SECONDS). Only its keyed hash is stored.
 */
export async function issueLoginCode(sessionId: number, validSeconds = LOGIN_CODE_TTL_SECONDS, tx: Tx = db): Promise<string> {
  const code = newSecretToken('lc_');
  await tx.insert(loginCodes).values({
    sessionId,
    codeHash: hashSessionToken(code),
    expiresAt: sql`now() + make_interval(secs => ${validSeconds})`,
  });
  return code;
}

/** The link a login code travels in: `/login?token=…` (the parameter's name is part of the API, docs/api.md#staff-sessions). */
export const loginUrl = (code: string) => `${env().publicBaseUrl}/login?token=${encodeURIComponent(code)}`;

/**
 * GET /login: a login code, on its first use and while both it and its session are live, becomes a
 * fresh browser session (its own token, a child of the code's session, same lifetime). A used,
 * stale or unknown code, a revoked or expired session or a deactivated staff member gives null.
 */
export async function redeemLoginCode(code: string, tx: Tx = db): Promise<{ token: string; ttlSeconds: number } | null> {
  return tx.transaction(async (tx) => {
    const [used] = await tx
      .update(loginCodes)
      .set({ usedAt: sql`now()` })
      .where(
        and(eq(loginCodes.codeHash, hashSessionToken(code)), isNull(loginCodes.usedAt), sql`${loginCodes.expiresAt} > now()`),
      )
      .returning({ sessionId: loginCodes.sessionId });
    if (!used) return null;
    const [parent] = await tx
      .select({ id: sessions.id, businessId: sessions.businessId, staffId: sessions.staffId, ttlSeconds: sessions.ttlSeconds })
      .from(sessions)
      .innerJoin(staff, eq(staff.id, sessions.staffId))
      .where(and(eq(sessions.id, used.sessionId), liveSessionOfActiveStaff()))
      .limit(1);
    if (!parent) return null;
    const token = newSecretToken();
    await tx.insert(sessions).values({
      businessId: parent.businessId,
      staffId: parent.staffId,
      parentId: parent.id,
      tokenHash: hashSessionToken(token),
      ttlSeconds: parent.ttlSeconds,
      expiresAt: sql`now() + make_interval(secs => ${parent.ttlSeconds})`,
    });
    return { token, ttlSeconds: parent.ttlSeconds };
  });
}

/** A new business API key; the plain key is returned once and only its hash is stored. */
export async function createBusinessApiKey(businessId: number, tx: Tx = db): Promise<string> {
  const { key, keyHash, prefix } = newBusinessApiKey();
  await tx.insert(apiKeys).values({ businessId, keyHash, prefix });
  return key;
}

/** The signed-in staff member and their business, for the inbox's `me` query. */
export async function getStaffProfile(businessId: number, staffId: number, tx: Tx = db) {
  const [row] = await tx
    .select({
      staffId: staff.id,
      staffName: staff.name,
      staffEmail: staff.email,
      role: staff.role,
      imageUrl: staff.imageUrl,
      businessId: businesses.id,
      businessName: businesses.name,
      timezone: businesses.timezone,
    })
    .from(staff)
    .innerJoin(businesses, eq(businesses.id, staff.businessId))
    .where(and(eq(staff.id, staffId), eq(staff.businessId, businessId)))
    .limit(1);
  if (!row) throw AppError.notFound('Staff');
  return row;
}
