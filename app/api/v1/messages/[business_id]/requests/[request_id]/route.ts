import { getRequestMessages as op } from '@/server/http/operations/messages';
import { route } from '@/server/http/route';
import { getRequestMessages } from '@/server/services/messages/requests';

// GET: the messages of one request, with a status summary.
export const GET = route(op, ({ params, query, tx }) =>
  getRequestMessages(params.business_id, params.request_id, query.page, query.page_size, tx),
);
