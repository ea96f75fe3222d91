import { z } from 'zod';
import { id } from '@/server/schemas/common';
import { announcePresence } from '@/server/services/presence';
import { PRESENCE_STATES } from '@/server/shared/presence';
import { router, staffProcedure } from '../init';

export const presenceRouter = router({
  /**
   * A presence beat of the session's staff member on a conversation of their business
   * (server/services/presence.ts): `viewing`, `replying`, `noting` every PRESENCE_BEAT_MS and when it
   * changes, `left` when they leave it. Another business's conversation (or none) is a 404. Nothing
   * is stored: colleagues' streams get a `presence` frame (docs/api.md#live-events).
   */
  beat: staffProcedure
    .input(z.object({ conversationId: id, state: z.enum(PRESENCE_STATES) }))
    .mutation(({ ctx, input }) => announcePresence({ businessId: ctx.caller.businessId, staffId: ctx.caller.staffId, ...input })),
});
