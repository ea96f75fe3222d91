import { getPlatformRequestMessages as op } from '@/server/http/operations/messages';
import { route } from '@/server/http/route';
import { getRequestMessages } from '@/server/services/messages/requests';

// GET (platform key): the messages of one request, whatever business it was for.
export const GET = route(op, ({ params, query, tx }) =>
  getRequestMessages(null, params.request_id, query.page, query.page_size, tx),
);
