import { z } from 'zod';
import { MESSAGE_FILTERS } from '@/db/schema/enums';
import { email, id } from '@/server/schemas/common';
import {
  EmailAttachment,
  lastSeenMessageId,
  MAX_EMAIL_TEXT_LENGTH,
  refuseBeyondSearchWindow,
  sendAt,
} from '@/server/schemas/messages';
import { MAX_SMS_LENGTH, MMS_MAX_MEDIA } from '@/server/shared/limits';
import { unresolvedMessage, unresolvedVariables } from '@/server/shared/templates';
import * as conversationMessages from '@/server/services/conversations/messages';
import { emailView } from '@/server/services/email-view';
import { submitEmail, submitSms } from '@/server/services/messages/submit';
import {
  cancelScheduledMessage,
  rescheduleMessage,
  sendLaterTimezone,
  sendScheduledNow,
} from '@/server/services/messages/schedule';
import { searchMessages } from '@/server/services/search';
import { MAX_SEARCH_TERM_LENGTH } from '@/server/shared/limits';
import { staffProcedure } from '../../init';
import { conversationProcedure, pageNumber } from './shared';

/**
 * The composer's Send later (when, and whether the client's reply cancels it) and its collision
 * guard (docs/api.md#collision-guard): the newest message the timeline showed; Send anyway passes
 * the newest of the 409's new_message_ids instead.
 */
const sendLaterInput = {
  send_at: sendAt.optional(),
  cancel_on_reply: z.boolean().optional(),
  last_seen_message_id: lastSeenMessageId.optional(),
};

/**
 * A text the composer sends: never with a saved reply's variable left unresolved
 * (docs/api.md#saved-replies), which would reach the client as `{{client.first_name}}`.
 */
export const sendable = <T extends z.ZodType<string>>(text: T) =>
  text.superRefine((value, ctx) => {
    const left = unresolvedVariables(value);
    if (left.length) ctx.addIssue({ code: 'custom', message: unresolvedMessage(left) });
  });

/** The timeline (read, flagged), scheduled messages, the composer's sends, and search. */
export const messageProcedures = {
  /** Newest first; `cursor` is the page number, for React Query's infinite timeline. */
  messages: conversationProcedure
    .input(
      z.object({
        filter: z.enum(MESSAGE_FILTERS).default('all'),
        page: pageNumber.default(1),
        cursor: pageNumber.nullish(),
        pageSize: z.number().int().min(1).max(100).default(50),
      }),
    )
    .query(({ ctx, input }) =>
      conversationMessages.conversationMessages(
        ctx.caller.businessId,
        ctx.conversation,
        input.filter,
        input.cursor ?? input.page,
        input.pageSize,
      ),
    ),
  /** An email's HTML, sanitized, as a sandboxed frame's document; remote images only when asked. */
  emailView: staffProcedure
    .input(z.object({ messageId: id, allowRemoteImages: z.boolean().default(false) }))
    .query(({ ctx, input }) => emailView(ctx.caller.businessId, input.messageId, input.allowRemoteImages)),
  markRead: conversationProcedure.input(z.object({ isRead: z.boolean().default(true) })).mutation(({ ctx, input }) =>
    conversationMessages.markMessagesRead(
      ctx.caller.businessId,
      {
        conversation_id: ctx.conversation.id,
        is_read: input.isRead,
      },
      { type: 'staff', staff_id: ctx.caller.staffId },
    ),
  ),
  flag: staffProcedure.input(z.object({ messageId: id, flagged: z.boolean() })).mutation(({ ctx, input }) =>
    conversationMessages.flagMessage(ctx.caller.businessId, input.messageId, input.flagged, {
      type: 'staff',
      staff_id: ctx.caller.staffId,
    }),
  ),
  /** Send later (docs/api.md#send-later): the timeline's Cancel and Edit of a scheduled message. */
  sendLaterTimezone: conversationProcedure.query(({ ctx }) =>
    sendLaterTimezone(ctx.caller.businessId, ctx.conversation.locationId),
  ),
  cancelScheduled: staffProcedure
    .input(z.object({ messageId: id }))
    .mutation(({ ctx, input }) =>
      cancelScheduledMessage(ctx.caller.businessId, input.messageId, { type: 'staff', staff_id: ctx.caller.staffId }),
    ),
  reschedule: staffProcedure.input(z.object({ messageId: id, send_at: sendAt })).mutation(({ ctx, input }) =>
    rescheduleMessage(ctx.caller.businessId, input.messageId, input.send_at, {
      type: 'staff',
      staff_id: ctx.caller.staffId,
    }),
  ),
  /** The timeline's Send now of a scheduled text, a held one included (staff confirmed it). */
  sendScheduledNow: staffProcedure
    .input(z.object({ messageId: id }))
    .mutation(({ ctx, input }) =>
      sendScheduledNow(ctx.caller.businessId, input.messageId, { type: 'staff', staff_id: ctx.caller.staffId }),
    ),
  /** The composer: one SMS or email to the conversation's client, through the queue operations. */
  sendSms: conversationProcedure
    .input(
      z.object({
        message: sendable(z.string().trim().min(1).max(MAX_SMS_LENGTH)),
        /** Pictures the composer uploaded (POST /businesses/{id}/media with the session): docs/api.md#mms-uploads. */
        media_ids: z.array(id).min(1).max(MMS_MAX_MEDIA).optional(),
        ...sendLaterInput,
        // Quiet hours: staff confirmed sending now although the client's window is closed.
        override_quiet_hours: z.boolean().optional(),
      }),
    )
    .mutation(({ ctx, input: { message, media_ids, override_quiet_hours, ...later } }) =>
      submitSms(
        ctx.caller.businessId,
        {
          sender_type: 'staff',
          staff_id: ctx.caller.staffId,
          category: 'conversational',
          ...later,
          messages: [{ client_id: ctx.conversation.clientId, message, media_ids }],
        },
        'send',
        { staffReply: { conversationId: ctx.conversation.id, sendNow: override_quiet_hours ?? false } },
      ),
    ),
  sendEmail: conversationProcedure
    .input(
      z.object({
        subject: sendable(z.string().trim().min(1).max(998)),
        message: sendable(z.string().min(1).max(MAX_EMAIL_TEXT_LENGTH)),
        cc_email: z.array(email).max(50).optional(),
        attachments: z.array(EmailAttachment).max(20).optional(),
        ...sendLaterInput,
      }),
    )
    .mutation(({ ctx, input: { send_at, cancel_on_reply, last_seen_message_id, ...input } }) =>
      submitEmail(
        ctx.caller.businessId,
        {
          sender_type: 'staff',
          staff_id: ctx.caller.staffId,
          category: 'conversational',
          send_at,
          cancel_on_reply,
          last_seen_message_id,
          messages: [{ client_id: ctx.conversation.clientId, ...input }],
        },
        'send',
      ),
    ),
  /** Search for staff: like the REST search, plus internal notes (docs/api.md#search). */
  search: staffProcedure
    .input(
      z
        .object({
          term: z.string().max(MAX_SEARCH_TERM_LENGTH),
          conversationId: id.optional(),
          page: pageNumber.default(1),
          cursor: pageNumber.nullish(),
          pageSize: z.number().int().min(1).max(100).default(25),
        })
        .superRefine((q, ctx) => refuseBeyondSearchWindow(q.cursor ?? q.page, q.pageSize, ctx)),
    )
    .query(({ ctx, input }) =>
      searchMessages({
        businessId: ctx.caller.businessId,
        term: input.term,
        conversationId: input.conversationId,
        includeNotes: true,
        page: input.cursor ?? input.page,
        pageSize: input.pageSize,
      }),
    ),
};
