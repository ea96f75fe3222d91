import { conversationMessages as op } from '@/server/http/operations/conversations';
import { route } from '@/server/http/route';
import { conversationMessages } from '@/server/services/conversation-messages';

// GET: the conversation's messages, newest first, filtered.
export const GET = route(op, ({ params, query }) =>
  conversationMessages(params.business_id, params.conversation_id, query.filter, query.page, query.page_size),
);
