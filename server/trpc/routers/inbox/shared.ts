import { z } from 'zod';
import { id, MAX_PAGE } from '@/server/schemas/common';
import * as conversations from '@/server/services/conversations';
import { staffProcedure } from '../../init';

/** A page number (or an infinite list's cursor): the same bound as REST's `page`. */
export const pageNumber = z.number().int().min(1).max(MAX_PAGE);

/**
 * `conversationProcedure` loads the conversation of the caller's business into ctx: tenancy for every
 * conversation procedure is checked here, once, and services that take a ConversationRef are handed
 * the loaded row instead of loading it again.
 */
export const conversationProcedure = staffProcedure.input(z.object({ conversationId: id })).use(async ({ ctx, input, next }) => {
  const conversation = await conversations.loadConversation(ctx.caller.businessId, input.conversationId);
  return next({ ctx: { ...ctx, conversation } });
});
