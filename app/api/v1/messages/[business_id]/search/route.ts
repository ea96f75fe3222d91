import { searchMessages as op } from '@/server/http/operations/search';
import { route } from '@/server/http/route';
import { searchMessages } from '@/server/services/search';

// GET: search the whole business, or one conversation named in the query (not in this business → 422).
export const GET = route(op, ({ params, query }) =>
  searchMessages({
    businessId: params.business_id,
    conversationId: query.conversation_id,
    conversationFrom: 'query',
    term: query.search_term,
    page: query.page,
    pageSize: query.page_size,
  }),
);
