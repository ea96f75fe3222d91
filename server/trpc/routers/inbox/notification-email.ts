import { NotificationEmailSettingsInput } from '@/server/schemas/notification-email';
import { notificationEmailSettings, setNotificationEmailSettings } from '@/server/services/notifications/settings';
import { STAFF_MANAGER_ROLES } from '@/server/shared/staff-availability';
import { requireRole } from '@/server/web/staff-context';
import { staffProcedure } from '../../init';

/**
 * The business's email notification settings on the Notifications settings page
 * (components/settings/notification-email-settings.tsx): REST's contract and rule, read by any
 * staff member, changed by an owner or a manager.
 */
export const notificationEmailProcedures = {
  notificationEmailSettings: staffProcedure.query(({ ctx }) => notificationEmailSettings(ctx.caller.businessId)),
  setNotificationEmailSettings: staffProcedure.input(NotificationEmailSettingsInput).mutation(async ({ ctx, input }) => {
    await requireRole(ctx.caller, STAFF_MANAGER_ROLES);
    return setNotificationEmailSettings(ctx.caller.businessId, input);
  }),
};
