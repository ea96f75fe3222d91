import { actorOfCaller } from '@/server/web/staff-context';
import { retryMessages as op } from '@/server/http/operations/messages';
import { route } from '@/server/http/route';
import { retryMessages } from '@/server/services/messages/requests';

// POST: re-queue failed/undelivered messages by id.
export const POST = route(op, ({ caller, params, body, tx }) =>
  retryMessages(params.business_id, { messageIds: body.message_ids }, actorOfCaller(caller), tx),
);
