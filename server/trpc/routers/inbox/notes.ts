import { z } from 'zod';
import * as conversationMessages from '@/server/services/conversations/messages';
import { conversationProcedure } from './shared';

/** Internal notes: staff-only lines in a conversation's timeline, never sent to the client. */
export const noteProcedures = {
  addNote: conversationProcedure
    .input(z.object({ content: z.string().trim().min(1).max(5000) }))
    .mutation(({ ctx, input }) =>
      conversationMessages.addNote(ctx.caller.businessId, ctx.conversation, input.content, ctx.caller.staffId),
    ),
};
