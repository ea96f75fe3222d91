import { actorOfCaller } from '@/server/web/staff-context';
import { markRead as op } from '@/server/http/operations/conversations';
import { route } from '@/server/http/route';
import { markMessagesRead } from '@/server/services/conversations/messages';

// POST: mark inbound messages read or unread by selectors.
export const POST = route(op, ({ caller, params, body, tx }) =>
  markMessagesRead(params.business_id, body, actorOfCaller(caller), tx),
);
