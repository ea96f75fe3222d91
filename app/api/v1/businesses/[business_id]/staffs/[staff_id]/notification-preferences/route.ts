import { getNotificationPreferences as getOp, setNotificationPreferences as setOp } from '@/server/http/operations/notifications';
import { route } from '@/server/http/route';
import { parseOrThrow } from '@/server/http/validation';
import { SetNotificationPreferencesBody, UnknownNotificationKinds } from '@/server/schemas/notifications';
import { notificationPreferences, setNotificationPreferences } from '@/server/services/notifications/preferences';
import { preferencesOut } from '@/server/shared/notifications';
import { STAFF_MANAGER_ROLES } from '@/server/shared/staff-availability';
import { staffOf } from '@/server/services/staff-schedules';
import { requireSelfOrRole } from '@/server/web/staff-context';

// GET and PUT: a staff member's notification choices. Another business's staff member is a 404
// before any role is asked for; a colleague's choices take a manager.
export const GET = route(getOp, async ({ params, caller, tx }) => {
  await staffOf(params.business_id, params.staff_id, tx);
  await requireSelfOrRole(caller, params.staff_id, STAFF_MANAGER_ROLES, tx);
  const preferences = await notificationPreferences(params.business_id, params.staff_id, tx);
  return { business_id: params.business_id, staff_id: params.staff_id, preferences: preferencesOut(preferences) };
});
export const PUT = route(setOp, async ({ params, body, caller, tx }) => {
  const change = parseOrThrow('body', SetNotificationPreferencesBody, body, UnknownNotificationKinds);
  await staffOf(params.business_id, params.staff_id, tx);
  await requireSelfOrRole(caller, params.staff_id, STAFF_MANAGER_ROLES, tx);
  const preferences = await setNotificationPreferences(params.business_id, params.staff_id, change.preferences, tx);
  return { business_id: params.business_id, staff_id: params.staff_id, preferences: preferencesOut(preferences) };
});
