import { actorOfCaller } from '@/server/web/staff-context';
import { flagMessage as op } from '@/server/http/operations/conversations';
import { route } from '@/server/http/route';
import { flagMessage } from '@/server/services/conversations/messages';

// POST: flag or unflag one message.
export const POST = route(op, ({ caller, params, body, tx }) =>
  flagMessage(params.business_id, params.message_id, body.flagged, actorOfCaller(caller), tx),
);
