import { setConversationStatus as op } from '@/server/http/operations/conversations';
import { route } from '@/server/http/route';
import { actingStaff, ownStaffOnly } from '@/server/web/staff-context';
import { setConversationStatus } from '@/server/services/conversations';

// POST: open / pending / snoozed (until) / resolved.
export const POST = route(op, ({ caller, params, body, tx }) => {
  ownStaffOnly(caller, body.staff_id);
  return setConversationStatus(params.business_id, params.conversation_id, body, actingStaff(caller), tx);
});
