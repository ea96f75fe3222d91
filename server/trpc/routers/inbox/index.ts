import { router } from '../../init';
import { activityProcedures } from './activity';
import { appointmentProcedures } from './appointments';
import { afterHoursProcedures } from './after-hours';
import { availabilityProcedures } from './availability';
import { assignmentProcedures } from './assignment';
import { clientProcedures } from './clients';
import { clientProfileProcedures } from './client-profile';
import { conversationProcedures } from './conversations';
import { eventProcedures } from './events';
import { lookupProcedures } from './lookup';
import { messageProcedures } from './messages';
import { noteProcedures } from './notes';
import { notificationEmailProcedures } from './notification-email';
import { notificationProcedures } from './notifications';
import { openingHoursProcedures } from './opening-hours';
import { reportProcedures } from './reports';
import { settingsProcedures } from './settings';
import { textProcedures } from './texts';
import { webhookProcedures } from './webhooks';

/**
 * The inbox's procedures, over the same services as REST, one file per area. They are spread into
 * one flat router, not nested ones, because the browser calls them by name (`inbox.list`,
 * `inbox.sendSms`, `inbox.events`…): the files are not part of a procedure's path. A name used in
 * two areas would silently keep only the last; inbox.test.ts pins the list of names.
 */
export const inboxRouter = router({
  ...conversationProcedures,
  ...messageProcedures,
  ...noteProcedures,
  ...notificationProcedures,
  ...notificationEmailProcedures,
  ...clientProcedures,
  ...clientProfileProcedures,
  ...settingsProcedures,
  ...openingHoursProcedures,
  ...afterHoursProcedures,
  ...availabilityProcedures,
  ...assignmentProcedures,
  ...webhookProcedures,
  ...eventProcedures,
  ...activityProcedures,
  ...lookupProcedures,
  ...textProcedures,
  ...reportProcedures,
  ...appointmentProcedures,
});
