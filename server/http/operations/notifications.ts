import { NotificationPreferencesResponse, SetNotificationPreferencesRequest } from '@/server/schemas/notifications';
import { staffPath } from '@/server/schemas/staff-availability';
import { defineOperation } from '../operation';

const common = { tag: 'notifications', auth: 'any' as const };

const WHAT =
  'Per kind, the channels a staff member is notified on (docs: Notifications): `in_app` (the inbox’s bell), `browser` (a desktop notification while the inbox is open), `email` (after the business’s delay, dropped when the conversation is read or answered first). Nobody is notified of their own action; staff who are away or off shift get no browser or email notifications. Choices not made are the defaults.';
const WHO =
  'A staff session reads and changes its own; a colleague’s needs the owner or manager role (403). A staff member of another business is a 404.';

export const getNotificationPreferences = defineOperation({
  operationId: 'getNotificationPreferences',
  method: 'get',
  path: '/businesses/{business_id}/staffs/{staff_id}/notification-preferences',
  summary: "A staff member's notification preferences",
  description: `${WHAT} ${WHO}`,
  params: staffPath,
  response: NotificationPreferencesResponse,
  errors: [403, 404],
  ...common,
});

export const setNotificationPreferences = defineOperation({
  operationId: 'setNotificationPreferences',
  method: 'put',
  path: '/businesses/{business_id}/staffs/{staff_id}/notification-preferences',
  summary: "Change a staff member's notification preferences",
  description: `${WHAT} The body names only what changes. A channel a kind does not use (the waiting digest is email only) is a 422 at its key. ${WHO}`,
  params: staffPath,
  // Parsed by the handler (SetNotificationPreferencesBody): an unknown kind at its own key.
  docBody: SetNotificationPreferencesRequest,
  response: NotificationPreferencesResponse,
  errors: [403, 404],
  ...common,
});
