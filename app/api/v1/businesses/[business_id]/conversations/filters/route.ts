import { conversationFilters as op } from '@/server/http/operations/conversations';
import { route } from '@/server/http/route';
import { staffForMine } from '@/server/web/staff-context';
import { conversationFilters } from '@/server/services/conversations/counts';

// GET: counts per status, assignment, channel, label and location, unread, flagged and possible opt-out.
export const GET = route(op, async ({ caller, params, query, tx }) =>
  conversationFilters(params.business_id, await staffForMine(caller, params.business_id, query.staff_id), tx),
);
