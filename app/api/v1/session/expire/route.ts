import { expireSession as op } from '@/server/http/operations/auth';
import { route } from '@/server/http/route';
import { expireSession } from '@/server/services/auth';

// POST: revoke a session (the caller's own when no token is given).
export const POST = route(op, async ({ caller, body, tx }) => {
  const updated = await expireSession(caller, body.access_token, tx);
  return { success: true, updated, message: updated ? 'Session expired' : 'No active session matched' };
});
