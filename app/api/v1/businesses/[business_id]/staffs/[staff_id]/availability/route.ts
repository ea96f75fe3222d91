import { setAvailability as op } from '@/server/http/operations/staff-availability';
import { route } from '@/server/http/route';
import { STAFF_MANAGER_ROLES } from '@/server/shared/staff-availability';
import { setAvailability, staffOf } from '@/server/services/staff-schedules';
import { actorOfCaller, requireRole, requireSelfOrRole } from '@/server/web/staff-context';

// PUT: the Away switch and the capacity. A session sets its own Away; a colleague's, or a capacity,
// takes a manager (after the 404 for another business's staff member).
export const PUT = route(op, async ({ params, body, caller, tx }) => {
  await staffOf(params.business_id, params.staff_id, tx);
  if (body.capacity !== undefined) await requireRole(caller, STAFF_MANAGER_ROLES, tx);
  else await requireSelfOrRole(caller, params.staff_id, STAFF_MANAGER_ROLES, tx);
  return setAvailability(params.business_id, params.staff_id, body, actorOfCaller(caller), tx);
});
