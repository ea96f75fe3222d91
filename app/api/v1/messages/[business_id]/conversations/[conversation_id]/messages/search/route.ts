import { searchConversationMessages as op } from '@/server/http/operations/search';
import { jsonText, route } from '@/server/http/route';
import { searchMessagesJson } from '@/server/services/search';

// GET: search one conversation's messages (a conversation not in this business → 404).
export const GET = route(op, async ({ params, query, tx }) =>
  jsonText(
    await searchMessagesJson(
      {
        businessId: params.business_id,
        conversationId: params.conversation_id,
        conversationFrom: 'path',
        term: query.search_term,
        page: query.page,
        pageSize: query.page_size,
      },
      tx,
    ),
  ),
);
