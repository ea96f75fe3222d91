/**
 * The event log's types (docs/api.md#events): every change the product makes, as platforms and the
 * features built on the log hear of it. Each type's `data` is a zod schema in
 * server/services/events/types.ts.
 */
export const EVENT_TYPES = [
  'message.received',
  'message.created',
  'message.status_updated',
  'message.flagged',
  'message.rescheduled',
  'message.edited',
  'conversation.created',
  'conversation.assigned',
  'conversation.status_changed',
  'conversation.snoozed',
  'conversation.woke',
  'conversation.labeled',
  'conversation.read',
  'note.created',
  'client.updated',
  'client.opted_out',
  'client.opted_in',
  'consent.recorded',
  'call.started',
  'call.completed',
  'voicemail.received',
  'staff.availability_changed',
  'webhook_endpoint.disabled',
  'appointment.created',
  'appointment.updated',
  'appointment.confirmed',
  'appointment.reschedule_requested',
  'appointment.cancel_requested',
  'appointment.canceled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
