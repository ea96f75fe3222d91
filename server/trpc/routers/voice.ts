import { z } from 'zod';
import { clientForCaller } from '@/server/services/directory';
import { inboxDialerToken } from '@/server/services/voice/token';
import { router, staffProcedure } from '../init';

/**
 * The browser dialer's procedures (docs/api.md#voice, docs/providers.md#access-token).
 *
 * - `token`: a Twilio access token with a Voice grant for the signed-in staff member, or
 *   `{ configured: false }` when voice is not set up (an answer, not an error: no failing request on
 *   every page load); the dialer then says "Calling isn't set up for this business", and the
 *   missing settings are in the server log.
 * - `clientForCaller`: the business's client behind an incoming call's number, for the incoming-call
 *   toast when the TwiML did not pass `ClientName`/`ClientId` custom parameters.
 */
export const voiceRouter = router({
  token: staffProcedure.query(({ ctx }) => inboxDialerToken({ businessId: ctx.caller.businessId, staffId: ctx.caller.staffId })),
  clientForCaller: staffProcedure
    .input(z.object({ phone: z.string().trim().min(1).max(64) }))
    .query(({ ctx, input }) => clientForCaller(ctx.caller.businessId, input.phone)),
});
