import { z } from 'zod';
import {
  AssignRequest,
  ClientDetailsResponse,
  ConversationFilters,
  ConversationListQuery,
  ConversationMessagesQuery,
  CreateConversationRequest,
  ClientDirectoryQuery,
  DirectoryQuery,
  FlagRequest,
  LabelRequest,
  MessageResponse,
  MessageStatusUpdateFilters,
  NoteRequest,
  PaginatedBusinessClientDetails,
  PaginatedClientList,
  PaginatedStaffList,
  StaffResponse,
  StatusRequest,
} from '@/server/schemas/businesses';
import { UpdateClientRequest } from '@/server/schemas/clients';
import { businessPath, idParam, UpdateSuccessResponse } from '@/server/schemas/common';
import { PaginatedMessages } from '@/server/schemas/messages';
import { SERVED_MEDIA_TYPES } from '@/server/shared/media-types';
import { defineOperation } from '../operation';

const conversationPath = z.object({ business_id: idParam, conversation_id: idParam });
const common = { auth: 'any' as const, errors: [403, 404] };

export const listConversations = defineOperation({
  operationId: 'listConversations',
  method: 'get',
  path: '/businesses/{business_id}/conversations',
  tag: 'businesses',
  summary: 'Get paginated list of client conversations for a business',
  description:
    "Newest activity first. `status` repeatable or comma-separated; `assignment=mine` uses the session's staff, or `staff_id` with an API key.",
  params: businessPath,
  query: ConversationListQuery,
  response: PaginatedBusinessClientDetails,
  ...common,
});

export const createConversation = defineOperation({
  operationId: 'createOrRetrieveConversation',
  method: 'post',
  path: '/businesses/{business_id}/conversations',
  tag: 'businesses',
  summary: 'Create or retrieve client conversation',
  description:
    "Exactly one of `client_id`, `phone_number` (read in the business's country) or `email`. A number or address no client has creates a `lead` client.",
  params: businessPath,
  body: CreateConversationRequest,
  response: ClientDetailsResponse,
  ...common,
});

export const conversationFilters = defineOperation({
  operationId: 'getConversationFilters',
  method: 'get',
  path: '/businesses/{business_id}/conversations/filters',
  tag: 'businesses',
  summary: 'Get available conversation filters',
  description:
    'Counts per status, assignment, channel, label and location (zero counts included), and of conversations with unread messages, flagged messages or a possible opt-out; `mine` only when a staff member is known.',
  params: businessPath,
  query: z.object({ staff_id: idParam.optional() }),
  response: ConversationFilters,
  ...common,
});

export const conversationMessages = defineOperation({
  operationId: 'getConversationMessages',
  method: 'get',
  path: '/businesses/{business_id}/conversations/{conversation_id}/messages',
  tag: 'businesses',
  summary: 'Get paginated conversation messages with filters',
  params: conversationPath,
  query: ConversationMessagesQuery,
  response: PaginatedMessages,
  ...common,
});

export const addNote = defineOperation({
  operationId: 'addNote',
  method: 'post',
  path: '/businesses/{business_id}/conversations/{conversation_id}/notes',
  tag: 'businesses',
  summary: 'Add internal note to a client conversation',
  params: conversationPath,
  body: NoteRequest,
  response: MessageResponse,
  idempotent: true,
  ...common,
});

export const assignConversation = defineOperation({
  operationId: 'assignConversation',
  method: 'post',
  path: '/businesses/{business_id}/conversations/{conversation_id}/assign',
  tag: 'businesses',
  summary: 'Assign a client conversation to a staff member',
  description: '`staff_id` an active staff member of the business (422 otherwise), or null to unassign.',
  params: conversationPath,
  body: AssignRequest,
  response: ClientDetailsResponse,
  ...common,
});

export const setConversationStatus = defineOperation({
  operationId: 'updateConversationStatus',
  method: 'post',
  path: '/businesses/{business_id}/conversations/{conversation_id}/status',
  tag: 'businesses',
  summary: 'Update client conversation status',
  description:
    '`snoozed` needs a future `snoozed_until`; the conversation opens again within 60 s after it passes, or at once on a new inbound message.',
  params: conversationPath,
  body: StatusRequest,
  response: ClientDetailsResponse,
  ...common,
});

export const labelConversation = defineOperation({
  operationId: 'labelConversation',
  method: 'post',
  path: '/businesses/{business_id}/conversations/{conversation_id}/label',
  tag: 'businesses',
  summary: 'Label a conversation',
  params: conversationPath,
  body: LabelRequest,
  response: ClientDetailsResponse,
  ...common,
});

export const markRead = defineOperation({
  operationId: 'updateReadStatus',
  method: 'post',
  path: '/businesses/{business_id}/messages/read',
  tag: 'businesses',
  summary: 'Update read status of messages using filters',
  params: businessPath,
  body: MessageStatusUpdateFilters,
  response: UpdateSuccessResponse,
  ...common,
});

export const flagMessage = defineOperation({
  operationId: 'flagMessage',
  method: 'post',
  path: '/businesses/{business_id}/messages/{message_id}/flag',
  tag: 'businesses',
  summary: 'Flag or unflag a message',
  params: z.object({ business_id: idParam, message_id: idParam }),
  body: FlagRequest,
  response: MessageResponse,
  ...common,
});

export const getMessageMedia = defineOperation({
  operationId: 'getMessageMedia',
  method: 'get',
  path: '/businesses/{business_id}/messages/{message_id}/media/{index}',
  tag: 'businesses',
  summary: 'Fetch one picture or file of an MMS',
  description:
    "The message's `attachments[index]`, fetched from Twilio on request (with the account's credentials) and answered as is: " +
    'JPEG, PNG, GIF and WebP inline, the other listed types as downloads; up to 5 MiB. ' +
    "Only the message's own media is served: an inbound MMS's Twilio media whose URL names that message's own sid " +
    '(of the configured account), or an upload an outbound MMS carries; any other attachment is a 404 and nothing is fetched.',
  params: z.object({
    business_id: idParam,
    message_id: idParam,
    index: z
      .string()
      .max(1)
      .regex(/^[0-9]$/, 'must be an integer from 0 to 9')
      .transform(Number),
  }),
  binaryResponse: SERVED_MEDIA_TYPES,
  ...common,
  errors: [403, 404, 415, 502],
});

export const clientDetails = defineOperation({
  operationId: 'getClientDetails',
  method: 'get',
  path: '/businesses/{business_id}/clients/{client_id}',
  tag: 'businesses',
  summary: 'Get detailed client profile and conversation information',
  description: 'A client this business does not have answers 200 with `null`.',
  params: z.object({ business_id: idParam, client_id: idParam }),
  response: ClientDetailsResponse,
  nullableResponse: true,
  ...common,
});

export const updateClient = defineOperation({
  operationId: 'updateClient',
  method: 'patch',
  path: '/businesses/{business_id}/clients/{client_id}',
  tag: 'businesses',
  summary: "Change a client's name or email address",
  description:
    'Each field optional, `null` clears it; at least one is required. A client this business does not have is a 404. ' +
    'The fields that changed are logged as a `client.updated` event; opt-outs follow the new address.',
  params: z.object({ business_id: idParam, client_id: idParam }),
  body: UpdateClientRequest,
  response: ClientDetailsResponse,
  ...common,
});

export const listClients = defineOperation({
  operationId: 'listClients',
  method: 'get',
  path: '/businesses/{business_id}/clients',
  tag: 'business-clients',
  summary: 'Get paginated list of clients for a business',
  params: businessPath,
  query: ClientDirectoryQuery,
  response: PaginatedClientList,
  ...common,
});

export const listStaff = defineOperation({
  operationId: 'listStaff',
  method: 'get',
  path: '/businesses/{business_id}/staffs',
  tag: 'business-staffs',
  summary: 'Get paginated list of staff members for a business',
  params: businessPath,
  query: DirectoryQuery,
  response: PaginatedStaffList,
  ...common,
});

export const staffProfile = defineOperation({
  operationId: 'getStaffProfile',
  method: 'get',
  path: '/businesses/{business_id}/staffs/{staff_id}',
  tag: 'business-staffs',
  summary: 'Get detailed profile of a specific staff member',
  params: z.object({ business_id: idParam, staff_id: idParam }),
  response: StaffResponse,
  ...common,
});
