import { z } from 'zod';
import {
  DEFAULT_NOTIFICATION_EMAIL_DELAY_MINUTES,
  DEFAULT_WAITING_DIGEST_MINUTES,
  MAX_NOTIFICATION_EMAIL_DELAY_MINUTES,
  MAX_WAITING_DIGEST_MINUTES,
} from '@/server/shared/notifications';

/** A business's notification email settings (docs/api.md#email-notifications-and-the-waiting-digest). */

const NotificationEmailDelay = z
  .number()
  .int()
  .min(0)
  .max(MAX_NOTIFICATION_EMAIL_DELAY_MINUTES)
  .meta({
    description: `Minutes an email notification waits for the conversation to be read or answered before it goes (0: at the next sweep, within 30 s; default ${DEFAULT_NOTIFICATION_EMAIL_DELAY_MINUTES})`,
  });

const WaitingDigestMinutes = z
  .number()
  .int()
  .min(1)
  .max(MAX_WAITING_DIGEST_MINUTES)
  .nullable()
  .meta({
    description: `Business minutes (opening hours only) a conversation waits for a reply before the waiting digest lists it; null: no digest (default ${DEFAULT_WAITING_DIGEST_MINUTES})`,
  });

export const NotificationEmailSettings = z
  .object({ notification_email_delay_minutes: NotificationEmailDelay, waiting_digest_minutes: WaitingDigestMinutes })
  .meta({ id: 'NotificationEmailSettings' });

export const NotificationEmailSettingsInput = z
  .strictObject({
    notification_email_delay_minutes: NotificationEmailDelay.optional(),
    waiting_digest_minutes: WaitingDigestMinutes.optional(),
  })
  .meta({ id: 'NotificationEmailSettingsInput', description: 'Omitted fields keep their value' });
