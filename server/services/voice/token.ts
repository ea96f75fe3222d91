import { eq } from 'drizzle-orm';
import AccessToken from 'twilio/lib/jwt/AccessToken';
import { db, type Tx } from '@/server/db/client';
import { businesses } from '@/db/schema';
import { env } from '@/server/env';
import { logger } from '@/server/logger';
import { AppError } from '@/server/errors';
import { int32FromDigits } from '@/server/schemas/common';
import { assertBusinessAccess, type Caller } from '@/server/services/auth';
import { requireStaff } from '@/server/services/directory';

/** DialerToken (docs/api.md#voice): one hour, like the Voice SDK's default token lifetime. */
const DIALER_TOKEN_TTL_SECONDS = 3600;

/** The Twilio Client identity of a staff member; TwiML and callbacks carry it as `client:staff-<id>`. */
export const dialerIdentity = (staffId: number) => `staff-${staffId}`;
export const staffIdOfIdentity = (value: string | undefined): number | null => {
  // Within PostgreSQL integer: anything else names no staff member.
  return int32FromDigits(value?.match(/^client:staff-(\d+)$/)?.[1]);
};

type DialerToken = { token: string; identity: string; expires_at: string };

/** The settings voice needs that are not set (none: voice is configured). */
export function missingVoiceSettings(): string[] {
  const { accountSid, apiKeySid, apiKeySecret, twimlAppSid } = env().twilio;
  return Object.entries({
    TWILIO_ACCOUNT_SID: accountSid,
    TWILIO_API_KEY_SID: apiKeySid,
    TWILIO_API_KEY_SECRET: apiKeySecret,
    TWILIO_TWIML_APP_SID: twimlAppSid,
  }).flatMap(([name, value]) => (value ? [] : [name]));
}

/** What a developer reads (the REST 503's detail, the server log): which settings to set. */
export const voiceNotConfigured = (missing: string[]) => `Voice calling is not configured: set ${missing.join(', ')}`;

/**
 * A Twilio access token for the browser dialer of an active staff member of the business: places
 * calls through the TwiML app (TWILIO_TWIML_APP_SID) and receives the calls rung to its identity.
 * Signed with the API key secret (never the auth token), so voice needs all four variables.
 */
export async function issueDialerToken(
  { businessId, staffId }: { businessId: number; staffId: number },
  tx: Tx = db,
): Promise<DialerToken> {
  await requireStaff(businessId, staffId, ['query', 'staff_id'], tx);
  const missing = missingVoiceSettings();
  if (missing.length) throw new AppError('not_configured', voiceNotConfigured(missing));
  const { accountSid, apiKeySid, apiKeySecret, twimlAppSid } = env().twilio;
  const identity = dialerIdentity(staffId);
  const accessToken = new AccessToken(accountSid!, apiKeySid!, apiKeySecret!, { identity, ttl: DIALER_TOKEN_TTL_SECONDS });
  accessToken.addGrant(new AccessToken.VoiceGrant({ outgoingApplicationSid: twimlAppSid!, incomingAllow: true }));
  const token = accessToken.toJwt();
  // The token's own `exp`, so the answer can never disagree with what Twilio enforces.
  const { exp } = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { exp: number };
  return { token, identity, expires_at: new Date(exp * 1000).toISOString() };
}

/** Whether this process already logged that voice is not configured: once is enough to fix it. */
let loggedNotConfigured = false;

/**
 * The inbox's dialer token (tRPC `voice.token`): `configured: false` when voice is not set up,
 * an answer and not an error, so a page load makes no failing request. Staff read "Calling isn't
 * set up for this business"; which settings are missing is for developers, in the server log
 * (once per process). REST's `GET /voice-calls/token` keeps its 503 naming them.
 */
export async function inboxDialerToken(
  subject: { businessId: number; staffId: number },
  tx: Tx = db,
): Promise<({ configured: true } & DialerToken) | { configured: false }> {
  const missing = missingVoiceSettings();
  if (missing.length === 0) return { configured: true, ...(await issueDialerToken(subject, tx)) };
  await requireStaff(subject.businessId, subject.staffId, ['query', 'staff_id'], tx);
  if (!loggedNotConfigured) {
    loggedNotConfigured = true;
    logger.warn({ missing }, voiceNotConfigured(missing));
  }
  return { configured: false };
}

/**
 * Whose token a REST caller asks for: a session's own staff member (naming another is a 403: a
 * token answers that person's calls); with an API key, `business_id` and `staff_id` from the query.
 */
export async function dialerTokenSubject(
  caller: Caller,
  query: { business_id?: number; staff_id?: number },
  tx: Tx = db,
): Promise<{ businessId: number; staffId: number }> {
  if (caller.kind === 'session') {
    if ((query.business_id ?? caller.businessId) !== caller.businessId || (query.staff_id ?? caller.staffId) !== caller.staffId) {
      throw new AppError('forbidden', 'A session can only get a dialer token for its own staff member');
    }
    return { businessId: caller.businessId, staffId: caller.staffId };
  }
  const missing = (['business_id', 'staff_id'] as const).filter((name) => query[name] === undefined);
  if (missing.length) {
    throw new AppError('validation', 'Validation error', {
      issues: missing.map((name) => ({ loc: ['query', name], msg: 'Field required with an API key', type: 'missing' })),
    });
  }
  const businessId = query.business_id!;
  if (caller.kind === 'platform') {
    // An id in the query that names no business is a 422 (docs/api.md#conventions), not the path's 404.
    const [row] = await tx.select({ id: businesses.id }).from(businesses).where(eq(businesses.id, businessId)).limit(1);
    if (!row) throw AppError.invalid(['query', 'business_id'], `Business ${businessId} not found`);
  }
  await assertBusinessAccess(caller, businessId, tx);
  return { businessId, staffId: query.staff_id! };
}
