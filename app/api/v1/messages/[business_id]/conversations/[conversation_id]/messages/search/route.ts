import { searchConversationMessages as op } from '@/server/http/operations/search';
import { route } from '@/server/http/route';
import { searchMessages } from '@/server/services/search';

// GET: search one conversation's messages (a conversation not in this business → 404).
export const GET = route(op, ({ params, query }) =>
  searchMessages({
    businessId: params.business_id,
    conversationId: params.conversation_id,
    conversationFrom: 'path',
    term: query.search_term,
    page: query.page,
    pageSize: query.page_size,
  }),
);
