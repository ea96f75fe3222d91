import { z } from 'zod';
import { OPT_OUT_CHANNELS } from '@/db/schema/enums';
import { PossibleOptOutDecision } from '@/server/schemas/businesses';
import { id } from '@/server/schemas/common';
import { StaffConsentRequest } from '@/server/schemas/consent';
import { optInStatement } from '@/server/schemas/opt-outs';
import { clientOptOutHistory, setClientOptOut } from '@/server/services/compliance/client-opt-outs';
import { clientConsents, recordConsent } from '@/server/services/compliance/consent';
import { decidePossibleOptOut, pendingOptOutText } from '@/server/services/compliance/opt-out-review';
import { staffProcedure } from '../../init';
import { conversationProcedure } from './shared';

/** The client panel and the possible opt-out banner: opt-outs, opt-ins and consent. */
export const clientProcedures = {
  /** The banner's quote: the pending possible opt-out text, or null once it is no longer pending. */
  possibleOptOut: conversationProcedure
    .input(z.object({ messageId: id }))
    .query(({ ctx, input }) => pendingOptOutText(ctx.caller.businessId, ctx.conversation, input.messageId)),
  /** The banner's buttons: confirm or dismiss the pending possible opt-out (docs/api.md#possible-opt-outs). */
  decidePossibleOptOut: conversationProcedure
    .input(PossibleOptOutDecision.pick({ decision: true }).extend({ messageId: id.optional() }))
    .mutation(({ ctx, input }) =>
      decidePossibleOptOut(ctx.caller.businessId, ctx.conversation, input.decision, {
        messageId: input.messageId,
        staffId: ctx.caller.staffId,
      }),
    ),
  /**
   * The client panel's opt-out control: the client's address out of (or back into) a channel, by the
   * staff member; opting out says why (`note`, kept in the history and shown in the timeline), opting
   * back in states how the client asked (docs/api.md#opt-out).
   */
  setClientOptOut: staffProcedure
    .input(
      z
        .object({ clientId: id, channel: z.enum(OPT_OUT_CHANNELS), optedOut: z.boolean(), ...optInStatement })
        .refine((v) => !v.optedOut || !!v.note, { path: ['note'], message: 'Say why the client is opted out' }),
    )
    .mutation(({ ctx, input: { clientId, channel, optedOut, source, note } }) =>
      setClientOptOut(
        ctx.caller.businessId,
        clientId,
        channel,
        optedOut,
        { via: 'staff', staffId: ctx.caller.staffId },
        { source, note },
      ),
    ),
  /** The client panel's opt-out history: opt-outs and opt-ins of the client's number and address. */
  optOutHistory: conversationProcedure.query(({ ctx }) => clientOptOutHistory(ctx.caller.businessId, ctx.conversation.clientId)),
  /** The client panel's consent section (docs/api.md#consent): current records and history. */
  consents: conversationProcedure.query(({ ctx }) => clientConsents(ctx.caller.businessId, ctx.conversation.clientId)),
  /** Staff record what the client told them; the record names them. */
  recordConsent: conversationProcedure
    .input(StaffConsentRequest)
    .mutation(({ ctx, input }) => recordConsent(ctx.caller.businessId, ctx.conversation.clientId, input, ctx.caller.staffId)),
};
