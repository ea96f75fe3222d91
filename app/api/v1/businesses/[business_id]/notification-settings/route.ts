import { getNotificationEmailSettings, setNotificationEmailSettings as setOp } from '@/server/http/operations/notification-email';
import { route } from '@/server/http/route';
import { notificationEmailSettings, setNotificationEmailSettings } from '@/server/services/notifications/settings';
import { STAFF_MANAGER_ROLES } from '@/server/shared/staff-availability';
import { requireRole } from '@/server/web/staff-context';

// GET: the email notification delay and the waiting digest's threshold; PUT: a manager changes them.
export const GET = route(getNotificationEmailSettings, ({ params, tx }) => notificationEmailSettings(params.business_id, tx));
export const PUT = route(setOp, async ({ params, body, caller, tx }) => {
  await requireRole(caller, STAFF_MANAGER_ROLES, tx);
  return setNotificationEmailSettings(params.business_id, body, tx);
});
