import { and, asc, eq } from 'drizzle-orm';
import { notifications } from '@/db/schema';
import { db } from '@/server/db/client';
import { recordEvents } from '@/server/services/events/record';
import { notificationsHandler } from '@/server/services/notifications/handler';
import { WEEKDAYS, type Schedule } from '@/server/shared/opening-hours';
import { settle } from './assignment';

/** Test helpers for notifications: the handlers run to the log's end, and the rows they wrote. */

/** Auto-assignment, then the notifications handler behind it, caught up with every event committed when called. */
export const settleNotifications = () => settle(notificationsHandler);

/** A business's notifications, oldest first. */
export const notificationsOf = (businessId: number) =>
  db.select().from(notifications).where(eq(notifications.businessId, businessId)).orderBy(asc(notifications.id));

/** One staff member's. */
export const notificationsFor = (businessId: number, staffId: number) =>
  db
    .select()
    .from(notifications)
    .where(and(eq(notifications.businessId, businessId), eq(notifications.staffId, staffId)))
    .orderBy(asc(notifications.id));

/** A staff member's notifications of a conversation, oldest first. */
export const notificationsOfConversation = (staffId: number, conversationId: number) =>
  db
    .select()
    .from(notifications)
    .where(and(eq(notifications.staffId, staffId), eq(notifications.conversationId, conversationId)))
    .orderBy(asc(notifications.id));

/** Logs that an outgoing webhook endpoint of the business was switched off (what tells owners and managers). */
export const endpointSwitchedOff = (businessId: number, reason = 'Failing') =>
  recordEvents([{ type: 'webhook_endpoint.disabled', businessId, actor: { type: 'system' }, data: { endpoint_id: 1, reason } }]);

/** A staff schedule of their own with no shifts: never on shift (so never available). */
export const NO_SHIFTS: Schedule = {
  weekly: Object.fromEntries(WEEKDAYS.map((d) => [d, [] as Schedule['weekly'][typeof d]])) as Schedule['weekly'],
  exceptions: [],
};
