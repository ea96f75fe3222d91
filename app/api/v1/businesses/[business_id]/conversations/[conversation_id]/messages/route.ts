import { conversationMessages as op } from '@/server/http/operations/conversations';
import { jsonText, route } from '@/server/http/route';
import { conversationMessagesJson } from '@/server/services/conversations/messages';

// GET: the conversation's messages, newest first, filtered; JSON text built by the database.
export const GET = route(op, async ({ params, query, tx }) =>
  jsonText(
    await conversationMessagesJson(params.business_id, params.conversation_id, query.filter, query.page, query.page_size, tx),
  ),
);
