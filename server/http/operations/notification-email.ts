import { businessPath } from '@/server/schemas/common';
import { NotificationEmailSettings, NotificationEmailSettingsInput } from '@/server/schemas/notification-email';
import { defineOperation } from '../operation';

const description =
  'Email notifications (docs: Email notifications and the waiting digest): an email notification waits `notification_email_delay_minutes` and is dropped if the conversation is read or answered meanwhile; during opening hours, the waiting digest lists to each available staff member the conversations waiting for a reply longer than `waiting_digest_minutes` business minutes. Changing them takes the owner or manager role (403 for another staff session).';
const common = { tag: 'notifications', auth: 'any' as const, description, response: NotificationEmailSettings };

export const getNotificationEmailSettings = defineOperation({
  ...common,
  operationId: 'getNotificationEmailSettings',
  method: 'get',
  path: '/businesses/{business_id}/notification-settings',
  summary: "The business's email notification delay and waiting digest threshold",
  params: businessPath,
  errors: [404],
});

export const setNotificationEmailSettings = defineOperation({
  ...common,
  operationId: 'setNotificationEmailSettings',
  method: 'put',
  path: '/businesses/{business_id}/notification-settings',
  summary: "Set the business's email notification delay and waiting digest threshold",
  params: businessPath,
  body: NotificationEmailSettingsInput,
  errors: [403, 404],
});
