import { actorOfCaller } from '@/server/web/staff-context';
import { rescheduleMessage as op } from '@/server/http/operations/messages';
import { route } from '@/server/http/route';
import { rescheduleMessage } from '@/server/services/messages/schedule';

// POST: move a scheduled (send later) message to another send_at.
export const POST = route(op, ({ caller, params, body, tx }) =>
  rescheduleMessage(params.business_id, params.message_id, body.send_at, actorOfCaller(caller), tx),
);
