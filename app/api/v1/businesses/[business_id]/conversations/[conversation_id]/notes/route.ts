import { addNote as op } from '@/server/http/operations/conversations';
import { route } from '@/server/http/route';
import { actingStaff } from '@/server/http/staff-context';
import { addNote } from '@/server/services/conversation-messages';

// POST: an internal note (author: staff_id, else the session's staff, else none).
export const POST = route(op, ({ caller, params, body }) =>
  addNote(params.business_id, params.conversation_id, body.content, body.staff_id ?? actingStaff(caller)),
);
