import { actorOfCaller } from '@/server/web/staff-context';
import { retryRequest as op } from '@/server/http/operations/messages';
import { route } from '@/server/http/route';
import { retryMessages } from '@/server/services/messages/requests';

// POST: re-queue the failed/undelivered messages of a request.
export const POST = route(op, ({ caller, params, tx }) =>
  retryMessages(params.business_id, { requestId: params.request_id }, actorOfCaller(caller), tx),
);
