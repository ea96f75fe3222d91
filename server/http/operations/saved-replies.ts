import { businessPath } from '@/server/schemas/common';
import {
  CreateSavedReplyRequest,
  PaginatedSavedReplies,
  SavedReply,
  SavedReplyDeleted,
  SavedReplyListQuery,
  SavedReplyPath,
  UpdateSavedReplyRequest,
} from '@/server/schemas/saved-replies';
import { defineOperation } from '../operation';

const common = { tag: 'saved-replies', auth: 'any' as const, errors: [403, 404] };
const RULES =
  'Variables not in the list are a 422 on the field; an SMS or any-channel body is at most 1,600 characters; only email replies have a subject; titles are unique per business, ignoring case (422 on `title`).';

export const listSavedReplies = defineOperation({
  operationId: 'listSavedReplies',
  method: 'get',
  path: '/businesses/{business_id}/saved-replies',
  summary: 'List saved replies',
  description:
    'By title (case-insensitive). `channel` keeps the replies usable on it: those limited to it and those for any channel.',
  params: businessPath,
  query: SavedReplyListQuery,
  response: PaginatedSavedReplies,
  ...common,
});

export const createSavedReply = defineOperation({
  operationId: 'createSavedReply',
  method: 'post',
  path: '/businesses/{business_id}/saved-replies',
  summary: 'Create a saved reply',
  description: RULES,
  params: businessPath,
  body: CreateSavedReplyRequest,
  response: SavedReply,
  ...common,
});

export const getSavedReply = defineOperation({
  operationId: 'getSavedReply',
  method: 'get',
  path: '/businesses/{business_id}/saved-replies/{saved_reply_id}',
  summary: 'Get a saved reply',
  params: SavedReplyPath,
  response: SavedReply,
  ...common,
});

export const updateSavedReply = defineOperation({
  operationId: 'updateSavedReply',
  method: 'patch',
  path: '/businesses/{business_id}/saved-replies/{saved_reply_id}',
  summary: 'Update a saved reply',
  description: `Only the fields given change; leaving the email channel drops the subject. ${RULES}`,
  params: SavedReplyPath,
  body: UpdateSavedReplyRequest,
  response: SavedReply,
  ...common,
});

export const deleteSavedReply = defineOperation({
  operationId: 'deleteSavedReply',
  method: 'delete',
  path: '/businesses/{business_id}/saved-replies/{saved_reply_id}',
  summary: 'Delete a saved reply',
  description: 'Messages already sent from it keep their text.',
  params: SavedReplyPath,
  response: SavedReplyDeleted,
  ...common,
});
