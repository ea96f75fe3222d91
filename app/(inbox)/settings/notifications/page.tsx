import { NotificationSettings } from '@/components/inbox/notification-settings';
import { NotificationEmailSettings } from '@/components/settings/notification-email-settings';

/**
 * `/settings/notifications`: the signed-in staff member's notification choices, per kind and channel,
 * and the business's email delay and waiting digest threshold (docs/api.md#notifications).
 */
export default function NotificationsPage() {
  return <NotificationSettings businessSection={<NotificationEmailSettings />} />;
}
