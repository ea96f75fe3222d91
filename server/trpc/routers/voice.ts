import { z } from 'zod';
import { clientForCaller } from '@/server/services/directory';
import { issueDialerToken } from '@/server/services/voice/token';
import { router, staffProcedure } from '../init';

/**
 * The browser dialer's procedures (docs/api.md#voice, docs/providers.md#access-token).
 *
 * - `token`: a Twilio access token with a Voice grant for the signed-in staff member. When voice is not
 *   configured the service throws AppError('not_configured'), which the inbox sees as SERVICE_UNAVAILABLE
 *   with the service's message; the dialer shows "Voice calling is not configured".
 * - `clientForCaller`: the business's client behind an incoming call's number, for the incoming-call
 *   toast when the TwiML did not pass `ClientName`/`ClientId` custom parameters.
 */
export const voiceRouter = router({
  token: staffProcedure.query(({ ctx }) => issueDialerToken({ businessId: ctx.caller.businessId, staffId: ctx.caller.staffId })),
  clientForCaller: staffProcedure
    .input(z.object({ phone: z.string().trim().min(1).max(64) }))
    .query(({ ctx, input }) => clientForCaller(ctx.caller.businessId, input.phone)),
});
