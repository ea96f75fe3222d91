import { z } from 'zod';
import {
  ASSIGNMENT_FILTERS,
  CHANNELS,
  CLIENT_TYPES,
  CONVERSATION_STATUSES,
  MESSAGE_FILTERS,
  NEEDS_ATTENTION_REASONS,
  OPT_OUT_CHANNELS,
  STAFF_ROLES,
} from '@/db/schema/enums';
import { actingStaffId } from './acting-staff';
import { AssignmentPolicy } from './assignment';
import {
  clientSearch,
  email,
  id,
  idParam,
  isoTimestamp,
  listSearch,
  paginationQuery,
  queryBoolean,
  timestampOut,
} from './common';
import { MessageItem } from './messages';
import { MAX_NOTE_MENTIONS } from '@/server/shared/limits';
import { SendingWindowOut } from './sending-windows';

export const LocationResponse = z
  .object({
    location_id: z.number().int(),
    external_id: z.string().nullable(),
    name: z.string(),
    address: z.string().nullable(),
    phone_number: z.string().nullable(),
    timezone: z.string().nullable(),
    sending_window: SendingWindowOut.nullable().meta({
      description: "The location's own quiet hours window (docs: Quiet hours); null: the business's",
    }),
    after_hours_reply: z.string().nullable().meta({
      description: 'The location\'s own after-hours answer (docs: After-hours answer); "": none here; null: the business\'s',
    }),
    assignment_policy: AssignmentPolicy.nullable().meta({
      description: "The location's own auto-assignment policy (docs: Auto-assignment); null: the business's",
    }),
  })
  .meta({ id: 'LocationResponse' });

const ClientConversationStatus = z.enum(CONVERSATION_STATUSES).meta({ id: 'ClientConversationStatus' });
const AssignmentFilterType = z.enum(ASSIGNMENT_FILTERS).meta({ id: 'AssignmentFilterType' });
const MessageFilterType = z.enum(MESSAGE_FILTERS).meta({ id: 'MessageFilterType' });
const ClientType = z.enum(CLIENT_TYPES).meta({ id: 'ClientType' });

/**
 * What the conversation list shows for a conversation (docs/api.md#previews): the client's latest
 * unread message, else the latest message, a note included (`message_type` NOTE: staff only).
 */
export const ConversationPreview = z
  .object({
    message_id: z.number().int(),
    message_type: MessageItem.shape.message_type,
    channel: MessageItem.shape.channel,
    direction: MessageItem.shape.direction,
    status: MessageItem.shape.message_status,
    content: z.string().nullable().meta({ description: 'The first 200 characters of the message' }),
    send_at: timestampOut.nullable().meta({ description: 'A scheduled message: when it goes' }),
    unread: z.boolean().meta({ description: "The client's latest message not yet read by staff" }),
  })
  .meta({ id: 'ConversationPreview' });

/** ClientDetailsResponse (docs/api.md#schemas). Staff fields are display names. */
export const ClientDetailsResponse = z
  .object({
    client_id: z.number().int(),
    conversation_id: z.number().int().nullable(),
    client_name: z.string().nullable(),
    client_gender: z.string().nullable(),
    client_image_url: z.string().nullable(),
    client_email: z.string().nullable(),
    client_phone_number: z.string().nullable(),
    client_type: ClientType,
    opted_out_sms: z.boolean(),
    opted_out_email: z.boolean(),
    location_id: z.number().int().nullable(),
    status: ClientConversationStatus.nullable(),
    snoozed_until: timestampOut.nullable(),
    updated_by: z.string().nullable(),
    unread_messages_count: z.number().int(),
    last_updated_channel: z.enum(CHANNELS).nullable(),
    messages_flagged_count: z.number().int(),
    last_updated_at: timestampOut.nullable(),
    label: z.string().nullable(),
    last_message_content: z.string().nullable(),
    resolved_by: z.string().nullable(),
    assigned_to: z.string().nullable(),
    assigned_staff_id: z.number().int().nullable(),
    staff_name: z.string().nullable(),
    staff_gender: z.string().nullable(),
    staff_image_url: z.string().nullable(),
    last_message_id: z.number().int().nullable(),
    last_read_message_id: z.number().int().nullable(),
    /** The client's text pending a staff decision as a possible opt-out (docs/api.md#possible-opt-outs). */
    possible_opt_out_message_id: z.number().int().nullable(),
    needs_attention_reason: z.enum(NEEDS_ATTENTION_REASONS).nullable().meta({
      description:
        "Why staff should look (docs: Needs attention): how the client's reply to an appointment reminder was read; null: nothing pending",
    }),
    needs_attention_appointment_id: z.number().int().nullable().meta({ description: 'The appointment the reason is about' }),
    needs_attention_since: timestampOut.nullable(),
    /** The list's preview (docs/api.md#previews); null for a conversation without messages. */
    preview: ConversationPreview.nullable(),
  })
  .meta({ id: 'ClientDetailsResponse' });

export const PaginatedBusinessClientDetails = z
  .object({
    conversations: z.array(ClientDetailsResponse),
    total_conversations: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
    next_page: z.boolean(),
  })
  .meta({ id: 'PaginatedBusinessClientDetails' });

/** A query value given repeated (`?status=a&status=b`) or comma-separated (`?status=a,b`). */
const listOf = <T extends z.ZodType>(item: T) =>
  z.preprocess(
    (v) =>
      v === undefined
        ? undefined
        : (Array.isArray(v) ? v : [v])
            .flatMap((s) => String(s).split(','))
            .map((s) => s.trim())
            .filter(Boolean),
    z.array(item).max(20),
  );

export const ConversationListQuery = z.object({
  status: listOf(ClientConversationStatus).optional(),
  assignment: AssignmentFilterType.default('all'),
  staff_id: idParam.optional(),
  channel: z.enum(CHANNELS).optional(),
  location_id: idParam.optional(),
  label: z.string().trim().min(1).max(50).optional(),
  unread: queryBoolean.optional(),
  flagged: queryBoolean.optional(),
  possible_opt_out: queryBoolean.optional(),
  /** Needs attention (docs/api.md#needs-attention): a reply to an appointment reminder for staff to decide. */
  needs_attention: queryBoolean.optional(),
  search: clientSearch("the client's name, email or phone number").optional(),
  ...paginationQuery,
});

const count = (value: z.ZodType) => z.object({ value, count: z.number().int() });
export const ConversationFilters = z
  .object({
    statuses: z.array(count(ClientConversationStatus)),
    assignments: z.array(count(AssignmentFilterType)),
    channels: z.array(count(z.enum(CHANNELS))),
    labels: z.array(count(z.string())),
    locations: z.array(z.object({ location_id: z.number().int(), name: z.string(), count: z.number().int() })),
    /** Conversations with unread messages (the list's `unread=true`). */
    unread: z.number().int(),
    /** Conversations with flagged messages (the list's `flagged=true`). */
    flagged: z.number().int(),
    /** Conversations with a possible opt-out waiting for staff (docs/api.md#possible-opt-outs). */
    possible_opt_out: z.number().int(),
  })
  .meta({ id: 'ConversationFilters' });

export const ConversationMessagesQuery = z.object({ filter: MessageFilterType.default('all'), ...paginationQuery });

/** The staff a note @mentions (docs/api.md#mentions): active staff of the business, each a 422 otherwise. */
export const noteMentionIds = z
  .array(id)
  .max(MAX_NOTE_MENTIONS)
  .meta({
    description: `Staff the note @mentions (up to ${MAX_NOTE_MENTIONS}), each an active staff member of this business (422 naming the entry otherwise); a repeated id counts once. Stored with the note and named by its note.created event.`,
  });

export const NoteRequest = z
  .object({ content: z.string().trim().min(1).max(5000), staff_id: actingStaffId, mentions: noteMentionIds.optional() })
  .meta({ id: 'NoteRequest' });

export const MessageResponse = z.object({ success: z.boolean(), data: MessageItem }).meta({ id: 'MessageResponse' });

export const AssignRequest = z.object({ staff_id: id.nullable() }).meta({ id: 'AssignRequest' });

export const StatusRequest = z
  .object({ status: ClientConversationStatus, snoozed_until: isoTimestamp.optional(), staff_id: actingStaffId })
  .superRefine((v, ctx) => {
    if (v.status === 'snoozed' && !v.snoozed_until) {
      ctx.addIssue({
        code: 'custom',
        path: ['snoozed_until'],
        message: 'Field required when status is snoozed',
        params: { type: 'missing' },
      });
    }
    if (v.snoozed_until instanceof Date && v.snoozed_until.getTime() <= Date.now()) {
      ctx.addIssue({ code: 'custom', path: ['snoozed_until'], message: 'must be in the future' });
    }
  })
  .meta({ id: 'ConversationStatusRequest' });

export const FlagRequest = z.object({ flagged: z.boolean() }).meta({ id: 'FlagRequest' });
export const LabelRequest = z.object({ label: z.string().trim().min(1).max(50).nullable() }).meta({ id: 'LabelRequest' });

export const MessageStatusUpdateFilters = z
  .object({
    conversation_id: id.optional(),
    client_id: id.optional(),
    message_ids: z.array(id).min(1).max(1000).optional(),
    up_to_message_id: id.optional(),
    is_read: z.boolean().default(true),
  })
  .superRefine((v, ctx) => {
    if (
      v.conversation_id === undefined &&
      v.client_id === undefined &&
      v.message_ids === undefined &&
      v.up_to_message_id === undefined
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['conversation_id'],
        message: 'At least one of conversation_id, client_id, message_ids, up_to_message_id is required',
      });
    }
  })
  .meta({ id: 'MessageStatusUpdateFilters' });

/** docs/api.md#new-conversation: exactly one of a client, a number or an address (a new one becomes a lead). */
export const CreateConversationRequest = z
  .object({
    client_id: id.optional(),
    phone_number: z
      .string()
      .trim()
      .min(1)
      .max(40)
      .optional()
      .meta({ description: "Read in the business's country; no client with it: a new lead" }),
    email: email.optional().meta({ description: 'No client with it: a new lead' }),
  })
  .superRefine((body, ctx) => {
    const given = [body.client_id, body.phone_number, body.email].filter((v) => v !== undefined).length;
    if (given !== 1) ctx.addIssue({ code: 'custom', message: 'give exactly one of client_id, phone_number or email' });
  })
  .meta({ id: 'CreateConversationRequest' });

export const ClientListResponse = z
  .object({
    client_id: z.number().int(),
    external_id: z.string().nullable(),
    client_name: z.string().nullable(),
    client_email: z.string().nullable(),
    client_phone_number: z.string().nullable(),
    client_gender: z.string().nullable(),
    client_image_url: z.string().nullable(),
    client_type: ClientType,
    location_id: z.number().int().nullable(),
    conversation_id: z.number().int().nullable(),
    opted_out_sms: z.boolean(),
    opted_out_email: z.boolean(),
    created_at: timestampOut,
  })
  .meta({ id: 'ClientListResponse' });

export const PaginatedClientList = z
  .object({
    clients: z.array(ClientListResponse),
    total_clients: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
    next_page: z.boolean(),
  })
  .meta({ id: 'PaginatedClientList' });

export const StaffResponse = z
  .object({
    staff_id: z.number().int(),
    external_id: z.string().nullable(),
    staff_name: z.string(),
    staff_email: z.string().nullable(),
    staff_phone_number: z.string().nullable(),
    staff_gender: z.string().nullable(),
    staff_image_url: z.string().nullable(),
    role: z.enum(STAFF_ROLES),
    location_id: z.number().int().nullable(),
    active: z.boolean(),
    open_conversations: z.number().int(),
  })
  .meta({ id: 'StaffResponse' });

export const PaginatedStaffList = z
  .object({
    staffs: z.array(StaffResponse),
    total_staffs: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
    next_page: z.boolean(),
  })
  .meta({ id: 'PaginatedStaffList' });

export const DirectoryQuery = z.object({
  search: listSearch('the name, email or phone number').optional(),
  external_id: z.string().trim().min(1).max(255).optional(),
  ...paginationQuery,
});

/** The clients list's query: its `search` also finds a number however it is typed. */
export const ClientDirectoryQuery = DirectoryQuery.extend({ search: clientSearch('the name, email or phone number').optional() });

/** Staff's decision on a conversation's possible opt-out (docs/api.md#possible-opt-outs). */
export const PossibleOptOutDecision = z
  .object({
    decision: z.enum(['confirm', 'dismiss']),
    /** The pending text the decision is about; another one pending is a 409. */
    message_id: id.optional(),
    staff_id: actingStaffId,
  })
  .meta({ id: 'PossibleOptOutDecision' });

export const clientOptOutPath = z.object({ business_id: idParam, client_id: idParam, channel: z.enum(OPT_OUT_CHANNELS) });
