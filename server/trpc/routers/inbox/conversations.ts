import { z } from 'zod';
import { ownStaffOnly } from '@/server/web/staff-context';
import { ConversationListQuery, CreateConversationRequest, LabelRequest, StatusRequest } from '@/server/schemas/businesses';
import { id } from '@/server/schemas/common';
import { conversationFilters } from '@/server/services/conversations/counts';
import { unseenMentionCount } from '@/server/services/conversations/mentions';
import { needsAttentionCount } from '@/server/services/conversations/needs-attention';
import * as conversations from '@/server/services/conversations';
import { mentionableStaff, staffNames } from '@/server/services/directory';
import { MENTION_QUERY_MAX_LENGTH } from '@/server/shared/limits';
import { startConversation } from '@/server/services/conversations/new';
import { staffProcedure } from '../../init';
import { conversationProcedure, pageNumber } from './shared';

/** The conversation list and its filters, a conversation's header, its assignee, status and label, starting one. */
export const conversationProcedures = {
  /**
   * `cursor` is the page number, for React Query's infinite list (it wins over `page`). The REST
   * query's filters, with JSON numbers where the query string has digits.
   */
  list: staffProcedure
    .input(
      ConversationListQuery.omit({ staff_id: true, location_id: true, page: true, page_size: true })
        .partial({ assignment: true })
        .extend({
          location_id: id.optional(),
          page: pageNumber.optional(),
          page_size: z.number().int().min(1).max(100).optional(),
          cursor: pageNumber.nullish(),
          // The Mentions view (docs/api.md#mentions): conversations with the caller's unseen mentions.
          mentioned: z.boolean().optional(),
        }),
    )
    .query(({ ctx, input: { cursor, ...input } }) =>
      conversations.listConversations(
        ctx.caller.businessId,
        { assignment: 'all', page: 1, page_size: 25, ...input, ...(cursor ? { page: cursor } : {}) },
        ctx.caller.staffId,
      ),
    ),
  /** The REST filters' counts, and the Mentions and Needs attention views' (docs/api.md#mentions, #needs-attention). */
  filters: staffProcedure.query(async ({ ctx }) => {
    const [filters, mentions, needsAttention] = await Promise.all([
      conversationFilters(ctx.caller.businessId, ctx.caller.staffId),
      unseenMentionCount(ctx.caller.businessId, ctx.caller.staffId),
      needsAttentionCount(ctx.caller.businessId),
    ]);
    return { ...filters, mentions, needs_attention: needsAttention };
  }),
  conversation: conversationProcedure.query(({ ctx }) =>
    conversations.conversationDetails(ctx.caller.businessId, ctx.conversation.id),
  ),
  /** The business's every staff member's name, for the assignee menu, presence and opt-out history. */
  staff: staffProcedure.query(({ ctx }) => staffNames(ctx.caller.businessId)),
  /** The active staff whose name holds what follows `@` in a note, for the mention picker. */
  mentionable: staffProcedure
    .input(z.object({ query: z.string().max(MENTION_QUERY_MAX_LENGTH) }))
    .query(({ ctx, input }) => mentionableStaff(ctx.caller.businessId, input.query)),
  assign: conversationProcedure
    .input(z.object({ staffId: id.nullable() }))
    .mutation(({ ctx, input }) =>
      conversations.assignConversation(ctx.caller.businessId, ctx.conversation, input.staffId, ctx.caller.staffId),
    ),
  setStatus: conversationProcedure.input(StatusRequest).mutation(({ ctx, input }) => {
    // The same rule as REST: the session acts as its own staff member (docs/api.md#staff-sessions).
    ownStaffOnly(ctx.caller, input.staff_id);
    return conversations.setConversationStatus(ctx.caller.businessId, ctx.conversation, input, ctx.caller.staffId);
  }),
  /** The REST label rules (LabelRequest): 1 to 50 characters once trimmed, or null to remove it. */
  label: conversationProcedure
    .input(LabelRequest)
    .mutation(({ ctx, input }) =>
      conversations.labelConversation(ctx.caller.businessId, ctx.conversation, input.label, ctx.caller.staffId),
    ),
  /** Lands in the client's conversation, created if new; a new number or address becomes a lead. */
  startConversation: staffProcedure
    .input(CreateConversationRequest)
    .mutation(({ ctx, input }) => startConversation(ctx.caller.businessId, input, 'body')),
};
