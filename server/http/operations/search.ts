import { z } from 'zod';
import { businessPath, idParam, MIN_SEARCH_TERM_LENGTH, paginationQuery, SEARCH_TERM_TOO_SHORT } from '@/server/schemas/common';
import { PaginatedMessages, refuseBeyondSearchWindow, SEARCH_RESULT_WINDOW, SEARCH_TOTAL_CAP } from '@/server/schemas/messages';
import { MAX_SEARCH_TERM_LENGTH } from '@/server/shared/limits';
import { defineOperation } from '../operation';

/** Trimmed; under 3 characters is a 422 on ['query', 'search_term'] (docs/api.md#search). */
const searchTerm = z
  .string({ error: 'must be a string' })
  .trim()
  .min(MIN_SEARCH_TERM_LENGTH, SEARCH_TERM_TOO_SHORT)
  .max(MAX_SEARCH_TERM_LENGTH, `must be at most ${MAX_SEARCH_TERM_LENGTH} characters`)
  .meta({
    description: `Case-insensitive substring of content or subject; trimmed, ${MIN_SEARCH_TERM_LENGTH}–${MAX_SEARCH_TERM_LENGTH} characters; % and _ are literal.`,
  });

const withinResultWindow = (q: { page: number; page_size: number }, ctx: z.RefinementCtx) =>
  refuseBeyondSearchWindow(q.page, q.page_size, ctx);

const conversationSearchPath = z.object({ business_id: idParam, conversation_id: idParam });
const conversationSearchQuery = z.object({ search_term: searchTerm, ...paginationQuery }).superRefine(withinResultWindow);
const businessSearchQuery = z
  .object({
    search_term: searchTerm,
    conversation_id: idParam
      .optional()
      .meta({ description: 'Only this conversation; without it, every conversation of the business.' }),
    ...paginationQuery,
  })
  .superRefine(withinResultWindow);

const rules =
  'Case-insensitive substring match on content and subject; LIKE wildcards (`%`, `_`) in the term are literal. ' +
  'Newest first (sent_at desc, then id desc). Internal notes are not returned. ' +
  `\`total_messages\` is exact up to ${SEARCH_TOTAL_CAP.toLocaleString('en-US')} matches; beyond that it is ${SEARCH_TOTAL_CAP.toLocaleString('en-US')} and \`total_capped\` is true ` +
  '(counting every match of a common term would cost in proportion to its matches). `next_page` is always exact. ' +
  `Pages reach the first ${SEARCH_RESULT_WINDOW.toLocaleString('en-US')} matches (page × page_size ≤ ${SEARCH_RESULT_WINDOW}; 422 past it).`;

export const searchConversationMessages = defineOperation({
  operationId: 'searchConversationMessages',
  method: 'get',
  path: '/messages/{business_id}/conversations/{conversation_id}/messages/search',
  tag: 'messages',
  summary: 'Search messages within a specific conversation',
  description: `${rules} A conversation not in this business is a 404.`,
  auth: 'any',
  params: conversationSearchPath,
  query: conversationSearchQuery,
  response: PaginatedMessages,
  errors: [403, 404],
});

export const searchMessages = defineOperation({
  operationId: 'searchMessages',
  method: 'get',
  path: '/messages/{business_id}/search',
  tag: 'messages',
  summary: 'Search messages (second variant)',
  description: `${rules} Without \`conversation_id\`, searches every conversation of the business; a \`conversation_id\` not in this business is a 422.`,
  auth: 'any',
  params: businessPath,
  query: businessSearchQuery,
  response: PaginatedMessages,
  errors: [403, 404],
});
