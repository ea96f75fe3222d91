import { env } from '@/server/env';
import { generateAuthToken as op } from '@/server/http/operations/auth';
import { route } from '@/server/http/route';
import { issueSession } from '@/server/services/auth';

// POST: a staff session token and its one-click login link.
export const POST = route(op, async ({ caller, body }) => {
  const session = await issueSession(caller, body);
  return {
    access_token: session.token,
    token_type: 'bearer' as const,
    expires_at: session.expiresAt.toISOString(),
    business_id: session.businessId,
    staff_id: session.staffId,
    login_url: `${env().publicBaseUrl}/login?token=${encodeURIComponent(session.token)}`,
  };
});
