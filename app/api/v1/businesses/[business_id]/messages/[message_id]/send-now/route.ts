import { actorOfCaller } from '@/server/web/staff-context';
import { sendScheduledMessageNow as op } from '@/server/http/operations/messages';
import { route } from '@/server/http/route';
import { sendScheduledNow } from '@/server/services/messages/schedule';

// POST: send a scheduled message now (also one held by quiet hours).
export const POST = route(op, ({ caller, params, tx }) =>
  sendScheduledNow(params.business_id, params.message_id, actorOfCaller(caller), tx),
);
