import { actorOfCaller } from '@/server/web/staff-context';
import { cancelScheduledMessage as op } from '@/server/http/operations/messages';
import { route } from '@/server/http/route';
import { cancelScheduledMessage } from '@/server/services/messages/schedule';

// POST: cancel a scheduled (send later) message.
export const POST = route(op, ({ caller, params, tx }) =>
  cancelScheduledMessage(params.business_id, params.message_id, actorOfCaller(caller), tx),
);
