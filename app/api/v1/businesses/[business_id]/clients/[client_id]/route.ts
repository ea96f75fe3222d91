import { clientDetails as op, updateClient as updateOp } from '@/server/http/operations/conversations';
import { route } from '@/server/http/route';
import { actingStaff } from '@/server/web/staff-context';
import { clientDetails } from '@/server/services/conversations';
import { updateClient } from '@/server/services/clients';

// GET: the client's profile and conversation; null for a client this business does not have.
export const GET = route(op, ({ params, tx }) => clientDetails(params.business_id, params.client_id, tx));
// PATCH: the client's name and email address (a session's change is its staff member's).
export const PATCH = route(updateOp, ({ caller, params, body, tx }) =>
  updateClient(params.business_id, params.client_id, body, actingStaff(caller), tx),
);
