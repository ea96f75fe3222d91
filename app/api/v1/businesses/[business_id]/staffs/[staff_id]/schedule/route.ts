import {
  clearStaffSchedule,
  getStaffSchedule as getOp,
  setStaffSchedule as setOp,
} from '@/server/http/operations/staff-availability';
import { route } from '@/server/http/route';
import { STAFF_MANAGER_ROLES } from '@/server/shared/staff-availability';
import { getStaffSchedule, setStaffSchedule, staffOf } from '@/server/services/staff-schedules';
import { requireSelfOrRole } from '@/server/web/staff-context';

// GET: the hours the staff member works and whether they are on shift; PUT: their own schedule;
// DELETE: back to their location's opening hours. Another business's staff member is a 404 before
// any role is asked for.
export const GET = route(getOp, ({ params, query, tx }) => getStaffSchedule(params.business_id, params.staff_id, query.at, tx));
export const PUT = route(setOp, async ({ params, body, caller, tx }) => {
  await staffOf(params.business_id, params.staff_id, tx);
  await requireSelfOrRole(caller, params.staff_id, STAFF_MANAGER_ROLES, tx);
  return setStaffSchedule(params.business_id, params.staff_id, body, tx);
});
export const DELETE = route(clearStaffSchedule, async ({ params, caller, tx }) => {
  await staffOf(params.business_id, params.staff_id, tx);
  await requireSelfOrRole(caller, params.staff_id, STAFF_MANAGER_ROLES, tx);
  return setStaffSchedule(params.business_id, params.staff_id, null, tx);
});
