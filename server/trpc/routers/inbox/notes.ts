import { z } from 'zod';
import { noteMentionIds } from '@/server/schemas/businesses';
import * as conversationMessages from '@/server/services/conversations/messages';
import { markMentionsSeen } from '@/server/services/conversations/mentions';
import { markNotificationsRead } from '@/server/services/notifications/read';
import { conversationProcedure } from './shared';

/** Internal notes: staff-only lines in a conversation's timeline, never sent to the client. */
export const noteProcedures = {
  /** `mentions`: the staff the composer's @ picker inserted (docs/api.md#mentions). */
  addNote: conversationProcedure
    .input(z.object({ content: z.string().trim().min(1).max(5000), mentions: noteMentionIds.optional() }))
    .mutation(({ ctx, input }) =>
      conversationMessages.addNote(ctx.caller.businessId, ctx.conversation, input.content, ctx.caller.staffId, input.mentions),
    ),
  /**
   * The conversation is open in the inbox: the signed-in staff member's mentions in it are seen, and
   * their notifications of it read (an email still waiting for one is then dropped).
   */
  seeMentions: conversationProcedure.mutation(async ({ ctx }) => {
    const { seen } = await markMentionsSeen(ctx.caller.businessId, ctx.conversation.id, ctx.caller.staffId);
    const read = await markNotificationsRead(ctx.caller.businessId, ctx.caller.staffId, {
      conversationId: ctx.conversation.id,
    });
    return { seen, notificationsRead: read };
  }),
};
