import { countSessionMint } from '@/server/web/credentials';
import { generateAuthToken as op } from '@/server/http/operations/auth';
import { route } from '@/server/http/route';
import { issueLoginCode, issueSession, loginUrl } from '@/server/services/auth';
import { db } from '@/server/db/client';

// POST: a staff session token for API use, and a one-time login link for the browser.
export const POST = route(op, async ({ caller, body }) => {
  await countSessionMint(caller, body.business_id);
  const { session, code } = await db.transaction(async (tx) => {
    const session = await issueSession(caller, body, tx);
    return { session, code: await issueLoginCode(session.id, undefined, tx) };
  });
  return {
    access_token: session.token,
    token_type: 'bearer' as const,
    expires_at: session.expiresAt.toISOString(),
    business_id: session.businessId,
    staff_id: session.staffId,
    login_url: loginUrl(code),
  };
});
