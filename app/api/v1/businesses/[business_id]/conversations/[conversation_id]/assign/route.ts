import { assignConversation as op } from '@/server/http/operations/conversations';
import { route } from '@/server/http/route';
import { actingStaff } from '@/server/web/staff-context';
import { assignConversation } from '@/server/services/conversations';

// POST: assign to a staff member, or unassign with null.
export const POST = route(op, ({ caller, params, body, tx }) =>
  assignConversation(params.business_id, params.conversation_id, body.staff_id, actingStaff(caller), tx),
);
