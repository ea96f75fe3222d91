import { and, asc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/client';
import { clients, conversations } from '@/db/schema';
import { normalizePhone } from '@/server/lib/phone';
import { issueDialerToken } from '@/server/services/voice/token';
import { router, staffProcedure } from '../init';

/**
 * The browser dialer's procedures (SPEC §5 DialerToken, §7 voice).
 *
 * - `token`: a Twilio access token with a Voice grant for the signed-in staff member. When voice is not
 *   configured the service throws AppError('not_configured'), which the inbox sees as SERVICE_UNAVAILABLE
 *   with the service's message; the dialer shows "Voice calling is not configured".
 * - `clientForCaller`: the business's client behind an incoming call's number, for the incoming-call
 *   toast when the TwiML did not pass `ClientName`/`ClientId` custom parameters.
 */
export const voiceRouter = router({
  token: staffProcedure.query(({ ctx }) => issueDialerToken({ businessId: ctx.caller.businessId, staffId: ctx.caller.staffId })),
  clientForCaller: staffProcedure.input(z.object({ phone: z.string().trim().min(1).max(64) })).query(async ({ ctx, input }) => {
    const phone = normalizePhone(input.phone);
    if (!phone) return null;
    const [row] = await db
      .select({ clientId: clients.id, name: clients.name, conversationId: conversations.id })
      .from(clients)
      .leftJoin(conversations, and(eq(conversations.businessId, clients.businessId), eq(conversations.clientId, clients.id)))
      .where(and(eq(clients.businessId, ctx.caller.businessId), eq(clients.phoneNumber, phone)))
      .orderBy(asc(clients.id))
      .limit(1);
    return row ? { clientId: row.clientId, name: row.name, conversationId: row.conversationId } : null;
  }),
});
