import { z } from 'zod';
import { id } from '@/server/schemas/common';
import { CreateSavedReplyRequest, UpdateSavedReplyRequest } from '@/server/schemas/saved-replies';
import { SendingWindowInput } from '@/server/schemas/sending-windows';
import { conversationQuietHours } from '@/server/services/compliance/quiet-hours';
import * as savedReplies from '@/server/services/saved-replies';
import { sendingWindowSettings, setBusinessSendingWindow, setLocationSendingWindow } from '@/server/services/sending-windows';
import { smsSegments } from '@/server/shared/sms-segments';
import { staffProcedure } from '../../init';
import { conversationProcedure } from './shared';

const savedReplyId = z.object({ savedReplyId: id });

/** Quiet hours and sending windows, saved replies: the settings pages and what the composer takes from them. */
export const settingsProcedures = {
  /** Quiet hours (docs/api.md#quiet-hours): the client's clock and window, for the composer's notice. */
  quietHours: conversationProcedure.query(({ ctx }) => conversationQuietHours(ctx.caller.businessId, ctx.conversation)),
  /** The quiet hours settings page. */
  sendingWindows: staffProcedure.query(({ ctx }) => sendingWindowSettings(ctx.caller.businessId)),
  setBusinessSendingWindow: staffProcedure
    .input(SendingWindowInput)
    .mutation(({ ctx, input }) => setBusinessSendingWindow(ctx.caller.businessId, input)),
  setLocationSendingWindow: staffProcedure
    .input(z.object({ locationId: id, window: SendingWindowInput.nullable() }))
    .mutation(({ ctx, input }) => setLocationSendingWindow(ctx.caller.businessId, input.locationId, input.window)),
  /** Saved replies for the composer's picker and the settings page, by title; `channel` keeps those usable on it. */
  savedReplies: staffProcedure
    .input(z.object({ search: z.string().trim().max(100).optional(), channel: z.enum(['sms', 'email']).optional() }))
    .query(({ ctx, input }) =>
      savedReplies.listSavedReplies(ctx.caller.businessId, {
        search: input.search || undefined,
        channel: input.channel,
        page: 1,
        page_size: 100,
      }),
    ),
  createSavedReply: staffProcedure
    .input(CreateSavedReplyRequest)
    .mutation(({ ctx, input }) => savedReplies.createSavedReply(ctx.caller.businessId, input)),
  updateSavedReply: staffProcedure
    .input(UpdateSavedReplyRequest.extend(savedReplyId.shape))
    .mutation(({ ctx, input: { savedReplyId, ...patch } }) =>
      savedReplies.updateSavedReply(ctx.caller.businessId, savedReplyId, patch),
    ),
  deleteSavedReply: staffProcedure
    .input(savedReplyId)
    .mutation(({ ctx, input }) => savedReplies.deleteSavedReply(ctx.caller.businessId, input.savedReplyId)),
  /**
   * A saved reply resolved for this conversation's client, the caller signing as staff: the text
   * (and subject) to put in the composer, the variables left without a value, and the SMS segments.
   */
  resolveSavedReply: conversationProcedure.input(savedReplyId).query(async ({ ctx, input }) => {
    const [resolved] = await savedReplies.resolveForRecipients(
      ctx.caller.businessId,
      input.savedReplyId,
      [{ clientId: ctx.conversation.clientId }],
      ctx.caller.staffId,
    );
    const { reply, body, subject } = resolved!;
    return {
      savedReplyId: reply.id,
      title: reply.title,
      channel: reply.channel,
      text: body.text,
      subject: subject?.text ?? null,
      missing: [...new Set([...body.missing, ...(subject?.missing ?? [])])],
      segments: smsSegments(body.text).segments,
    };
  }),
};
