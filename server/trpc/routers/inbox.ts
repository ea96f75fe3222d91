import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { MESSAGE_FILTERS, OPT_OUT_CHANNELS } from '@/db/schema/enums';
import { ownStaffOnly } from '@/server/http/staff-context';
import type { InboxEvent } from '@/server/realtime/publish';
import {
  ConversationListQuery,
  CreateConversationRequest,
  PossibleOptOutDecision,
  StatusRequest,
} from '@/server/schemas/businesses';
import { email, id, MAX_PAGE } from '@/server/schemas/common';
import { EmailAttachment, MAX_EMAIL_TEXT_LENGTH, refuseBeyondSearchWindow, sendAt } from '@/server/schemas/messages';
import { MAX_SMS_LENGTH, MMS_MAX_MEDIA } from '@/server/shared/limits';
import { clientOptOutHistory, setClientOptOut } from '@/server/services/compliance/client-opt-outs';
import { optInStatement } from '@/server/schemas/opt-outs';
import { decidePossibleOptOut, pendingOptOutText } from '@/server/services/compliance/opt-out-review';
import { smsSegments } from '@/server/shared/sms-segments';
import { unresolvedMessage, unresolvedVariables } from '@/server/shared/templates';
import { CreateSavedReplyRequest, UpdateSavedReplyRequest } from '@/server/schemas/saved-replies';
import * as savedReplies from '@/server/services/saved-replies';
import * as conversationMessages from '@/server/services/conversations/messages';
import { conversationFilters } from '@/server/services/conversations/counts';
import * as conversations from '@/server/services/conversations';
import { listStaff } from '@/server/services/directory';
import { emailView } from '@/server/services/email-view';
import { findClientsToMessage, startConversation } from '@/server/services/conversations/new';
import { clientConsents, recordConsent } from '@/server/services/compliance/consent';
import { StaffConsentRequest } from '@/server/schemas/consent';
import { submitEmail, submitSms } from '@/server/services/messages/submit';
import {
  cancelScheduledMessage,
  rescheduleMessage,
  sendLaterTimezone,
  sendScheduledNow,
} from '@/server/services/messages/schedule';
import { conversationQuietHours } from '@/server/services/compliance/quiet-hours';
import { sendingWindowSettings, setBusinessSendingWindow, setLocationSendingWindow } from '@/server/services/sending-windows';
import { SendingWindowInput } from '@/server/schemas/sending-windows';
import { searchMessages } from '@/server/services/search';
import { MAX_SEARCH_TERM_LENGTH } from '@/server/shared/limits';
import { router, staffProcedure } from '../init';

/** The composer's Send later: when, and whether the client's reply cancels it. */
const sendLaterInput = { send_at: sendAt.optional(), cancel_on_reply: z.boolean().optional() };

/**
 * A text the composer sends: never with a saved reply's variable left unresolved
 * (docs/api.md#saved-replies), which would reach the client as `{{client.first_name}}`.
 */
const sendable = <T extends z.ZodType<string>>(text: T) =>
  text.superRefine((value, ctx) => {
    const left = unresolvedVariables(value);
    if (left.length) ctx.addIssue({ code: 'custom', message: unresolvedMessage(left) });
  });

const savedReplyId = z.object({ savedReplyId: id });

/** A page number (or an infinite list's cursor): the same bound as REST's `page`. */
const pageNumber = z.number().int().min(1).max(MAX_PAGE);

/**
 * The inbox's procedures, over the same services as REST. `conversationProcedure` loads the
 * conversation of the caller's business into ctx: tenancy for every conversation procedure is
 * checked here, once, and services that take a ConversationRef are handed the loaded row instead
 * of loading it again.
 */
const conversationProcedure = staffProcedure.input(z.object({ conversationId: id })).use(async ({ ctx, input, next }) => {
  const conversation = await conversations.loadConversation(ctx.caller.businessId, input.conversationId);
  return next({ ctx: { ...ctx, conversation } });
});

export const inboxRouter = router({
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
        }),
    )
    .query(({ ctx, input: { cursor, ...input } }) =>
      conversations.listConversations(
        ctx.caller.businessId,
        { assignment: 'all', page: 1, page_size: 25, ...input, ...(cursor ? { page: cursor } : {}) },
        ctx.caller.staffId,
      ),
    ),
  filters: staffProcedure.query(({ ctx }) => conversationFilters(ctx.caller.businessId, ctx.caller.staffId)),
  conversation: conversationProcedure.query(({ ctx }) =>
    conversations.conversationDetails(ctx.caller.businessId, ctx.conversation.id),
  ),
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
  /** The business's staff, for the assignee picker. */
  staff: staffProcedure.query(({ ctx }) => listStaff(ctx.caller.businessId, { page: 1, page_size: 200 })),
  addNote: conversationProcedure
    .input(z.object({ content: z.string().trim().min(1).max(5000) }))
    .mutation(({ ctx, input }) =>
      conversationMessages.addNote(ctx.caller.businessId, ctx.conversation, input.content, ctx.caller.staffId),
    ),
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
  label: conversationProcedure
    .input(z.object({ label: z.string().trim().min(1).max(50).nullable() }))
    .mutation(({ ctx, input }) =>
      conversations.labelConversation(ctx.caller.businessId, ctx.conversation, input.label, ctx.caller.staffId),
    ),
  markRead: conversationProcedure.input(z.object({ isRead: z.boolean().default(true) })).mutation(({ ctx, input }) =>
    conversationMessages.markMessagesRead(ctx.caller.businessId, {
      conversation_id: ctx.conversation.id,
      is_read: input.isRead,
    }),
  ),
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
   * staff member; opting back in states how the client asked (docs/api.md#opt-out).
   */
  setClientOptOut: staffProcedure
    .input(z.object({ clientId: id, channel: z.enum(OPT_OUT_CHANNELS), optedOut: z.boolean(), ...optInStatement }))
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
  flag: staffProcedure
    .input(z.object({ messageId: id, flagged: z.boolean() }))
    .mutation(({ ctx, input }) => conversationMessages.flagMessage(ctx.caller.businessId, input.messageId, input.flagged)),
  /** Send later (docs/api.md#send-later): the timeline's Cancel and Edit of a scheduled message. */
  sendLaterTimezone: conversationProcedure.query(({ ctx }) =>
    sendLaterTimezone(ctx.caller.businessId, ctx.conversation.locationId),
  ),
  cancelScheduled: staffProcedure
    .input(z.object({ messageId: id }))
    .mutation(({ ctx, input }) => cancelScheduledMessage(ctx.caller.businessId, input.messageId)),
  reschedule: staffProcedure
    .input(z.object({ messageId: id, send_at: sendAt }))
    .mutation(({ ctx, input }) => rescheduleMessage(ctx.caller.businessId, input.messageId, input.send_at)),
  /** The timeline's Send now of a scheduled text, a held one included (staff confirmed it). */
  sendScheduledNow: staffProcedure
    .input(z.object({ messageId: id }))
    .mutation(({ ctx, input }) => sendScheduledNow(ctx.caller.businessId, input.messageId)),
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
  /** The new-message picker: clients by name, email or number (docs/api.md#new-conversation). */
  findClientsToMessage: staffProcedure
    .input(z.object({ term: z.string().trim().min(1).max(100) }))
    .query(({ ctx, input }) => findClientsToMessage(ctx.caller.businessId, input.term)),
  /** Lands in the client's conversation, created if new; a new number or address becomes a lead. */
  startConversation: staffProcedure
    .input(CreateConversationRequest)
    .mutation(({ ctx, input }) => startConversation(ctx.caller.businessId, input, 'body')),
  /** The client panel's consent section (docs/api.md#consent): current records and history. */
  consents: conversationProcedure.query(({ ctx }) => clientConsents(ctx.caller.businessId, ctx.conversation.clientId)),
  /** Staff record what the client told them; the record names them. */
  recordConsent: conversationProcedure
    .input(StaffConsentRequest)
    .mutation(({ ctx, input }) => recordConsent(ctx.caller.businessId, ctx.conversation.clientId, input, ctx.caller.staffId)),
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
        undefined,
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
    .mutation(({ ctx, input: { send_at, cancel_on_reply, ...input } }) =>
      submitEmail(
        ctx.caller.businessId,
        {
          sender_type: 'staff',
          staff_id: ctx.caller.staffId,
          category: 'conversational',
          send_at,
          cancel_on_reply,
          messages: [{ client_id: ctx.conversation.clientId, ...input }],
        },
        'send',
      ),
    ),
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
  /**
   * Live events of the staff member's business (SSE), fed by PostgreSQL LISTEN/NOTIFY: the typed
   * face of the stream the web server serves itself on this path, in this procedure's wire format
   * (server/realtime/event-stream.ts), in production and in development alike. A request reaches
   * this procedure only when that stream declined it: no or an unknown session, the rate limit (both
   * answered by the middleware before this body), or a moment ago the database was down or the
   * process began draining — then it ends at once with SERVICE_UNAVAILABLE, which the client
   * retries, reaching the web server's stream again.
   */
  events: staffProcedure.subscription(async function* (): AsyncGenerator<InboxEvent> {
    throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'Live events are not available right now; reconnecting' });
  }),
});
