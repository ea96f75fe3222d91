import { eq } from 'drizzle-orm';
import { businesses } from '@/db/schema';
import { db, type Tx } from '@/server/db/client';
import { AppError } from '@/server/errors';
import { mergeBusinessSettings } from '@/server/services/business-settings';
import { DEFAULT_NOTIFICATION_EMAIL_DELAY_MINUTES } from '@/server/shared/notifications';
import { digestThreshold } from './digest';

/**
 * A business's notification email settings (docs/api.md#email-notifications-and-the-waiting-digest):
 * how long an email notification waits, and the waiting digest's threshold (null: off). Stored in
 * `businesses.settings`; the handler and the digest job read them from there.
 */

export type NotificationEmailSettings = { notification_email_delay_minutes: number; waiting_digest_minutes: number | null };

export async function notificationEmailSettings(businessId: number, tx: Tx = db): Promise<NotificationEmailSettings> {
  const [row] = await tx.select({ settings: businesses.settings }).from(businesses).where(eq(businesses.id, businessId));
  if (!row) throw AppError.notFound('Business');
  return {
    notification_email_delay_minutes: row.settings.notification_email_delay_minutes ?? DEFAULT_NOTIFICATION_EMAIL_DELAY_MINUTES,
    waiting_digest_minutes: digestThreshold(row.settings),
  };
}

/** Sets the fields given (checked by the contract: server/schemas/notification-email.ts); the others keep theirs. A delay applies to emails planned after it. */
export async function setNotificationEmailSettings(
  businessId: number,
  input: Partial<NotificationEmailSettings>,
  tx: Tx = db,
): Promise<NotificationEmailSettings> {
  await mergeBusinessSettings(businessId, input, tx);
  return notificationEmailSettings(businessId, tx);
}
