import { searchMessages as op } from '@/server/http/operations/search';
import { jsonText, route } from '@/server/http/route';
import { searchMessagesJson } from '@/server/services/search';

// GET: search the whole business, or one conversation named in the query (not in this business → 422).
export const GET = route(op, async ({ params, query, tx }) =>
  jsonText(
    await searchMessagesJson(
      {
        businessId: params.business_id,
        conversationId: query.conversation_id,
        conversationFrom: 'query',
        term: query.search_term,
        page: query.page,
        pageSize: query.page_size,
      },
      tx,
    ),
  ),
);
