import { labelConversation as op } from '@/server/http/operations/conversations';
import { route } from '@/server/http/route';
import { actingStaff } from '@/server/web/staff-context';
import { labelConversation } from '@/server/services/conversations';

// POST: set or clear the conversation's label.
export const POST = route(op, ({ caller, params, body, tx }) =>
  labelConversation(params.business_id, params.conversation_id, body.label, actingStaff(caller), tx),
);
