import { addNote as op } from '@/server/http/operations/conversations';
import { route } from '@/server/http/route';
import { writingStaff } from '@/server/web/staff-context';
import { addNote } from '@/server/services/conversations/messages';

// POST: an internal note (author: the session's staff; with an API key, staff_id or none), with its @mentions.
export const POST = route(op, ({ caller, params, body, tx }) =>
  addNote(params.business_id, params.conversation_id, body.content, writingStaff(caller, body.staff_id), body.mentions, tx),
);
