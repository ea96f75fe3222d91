import { conversationActivityHandler } from '@/server/services/activity/handler';
import { afterHoursHandler } from '@/server/services/after-hours/handler';
import { appointmentRepliesHandler } from '@/server/services/appointments/replies-handler';
import { assignmentHandler } from '@/server/services/assignment/handler';
import { notificationsHandler } from '@/server/services/notifications/handler';
import { outgoingWebhooksHandler } from '@/server/services/outgoing-webhooks/handler';
import { reportsHandler } from '@/server/services/reports/handler';
import type { EventHandler } from './dispatch';

/**
 * The event log's handlers (docs/architecture.md#event-log), in the order each dispatch round gives
 * them the log: every worker runs the dispatcher over this list (workers/outgoing-webhooks.ts).
 * A feature that reacts to changes adds its handler here; the write paths do not change. Each has
 * its own cursor, named by `name`: a new handler starts at the oldest event the log still keeps.
 */
export const EVENT_HANDLERS: readonly EventHandler[] = [
  outgoingWebhooksHandler,
  conversationActivityHandler,
  afterHoursHandler,
  appointmentRepliesHandler,
  assignmentHandler,
  notificationsHandler,
  reportsHandler,
];
