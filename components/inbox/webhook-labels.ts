import type { EventType } from '@/server/shared/event-types';
import type { WebhookDeliveryStatus } from '@/server/shared/outgoing-webhooks';

/**
 * The webhooks page's words (docs/api.md#webhooks-you-receive-from-us): what each event means to a
 * front desk, what a delivery's state and an endpoint's health come to. Pure, tested in
 * webhook-labels.test.ts.
 */
export const EVENT_LABEL: Record<EventType, string> = {
  'message.received': 'A client’s text or email arrives',
  'message.created': 'A text or email is sent or scheduled',
  'message.status_updated': 'A text’s or email’s delivery status changes',
  'message.flagged': 'A message is flagged or unflagged',
  'message.rescheduled': 'A scheduled message is moved or sent now',
  'message.edited': 'A scheduled text’s words are changed',
  'conversation.created': 'A conversation starts',
  'conversation.assigned': 'A conversation is assigned',
  'conversation.status_changed': 'A conversation is opened, set pending or resolved',
  'conversation.snoozed': 'A conversation is snoozed',
  'conversation.woke': 'A snoozed conversation wakes up',
  'conversation.labeled': 'A conversation’s label changes',
  'conversation.read': 'A conversation is marked read or unread',
  'note.created': 'A note is added',
  'client.updated': 'A client’s details change in an import',
  'client.opted_out': 'A client opts out',
  'client.opted_in': 'A client opts back in',
  'consent.recorded': 'A consent is recorded',
  'call.started': 'A call starts',
  'call.completed': 'A call ends',
  'voicemail.received': 'A voicemail arrives',
  'staff.availability_changed': 'A colleague goes Away or comes back',
  'webhook_endpoint.disabled': 'One of these webhook addresses is turned off',
  'appointment.created': 'An appointment is booked',
  'appointment.updated': 'An appointment changes (time, staff, status…)',
  'appointment.confirmed': 'A client confirms an appointment',
  'appointment.reschedule_requested': 'A client asks to reschedule',
  'appointment.cancel_requested': 'A client says they cannot come',
  'appointment.canceled': 'An appointment is canceled',
};

/** A delivery's event: the test event is not in the log's list. */
export const eventLabel = (type: string): string =>
  type === 'webhook.test' ? 'Test event' : (EVENT_LABEL[type as EventType] ?? type);

/** The filter's choices; '' is every delivery. */
export const OUTCOME_LABEL: Record<WebhookDeliveryStatus | '', string> = {
  '': 'All',
  pending: 'Waiting to send',
  delivered: 'Delivered',
  failed: 'Failed',
};

/** A pending delivery that has been tried is a failure being retried, not one on its way. */
export function deliveryState(d: { status: WebhookDeliveryStatus; attempts: number }): {
  label: string;
  tone: 'ok' | 'warn' | 'bad' | 'wait';
} {
  if (d.status === 'delivered') return { label: 'Delivered', tone: 'ok' };
  if (d.status === 'failed') return { label: 'Failed', tone: 'bad' };
  return d.attempts > 0 ? { label: 'Failed, will retry', tone: 'warn' } : { label: 'Sending…', tone: 'wait' };
}

/** Dates on this page: day and time to the second, the grain at which deliveries happen. */
export function when(iso: string): string {
  return new Date(iso).toLocaleString('en-US', {
    month: 'short',
    day: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
    second: '2-digit',
  });
}

/** An endpoint's health in a sentence: working, failing since when, or off (why and since when). */
export function endpointHealth(e: {
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: string | null;
  failing_since: string | null;
}): { label: string; tone: 'ok' | 'warn' | 'bad' } {
  if (!e.enabled) {
    const since = e.disabled_at ? ` since ${when(e.disabled_at)}` : '';
    return e.disabled_reason
      ? { label: `Turned off${since}: ${e.disabled_reason}`, tone: 'bad' }
      : { label: `Turned off by hand${since}`, tone: 'bad' };
  }
  if (e.failing_since) return { label: `Failing since ${when(e.failing_since)}: deliveries are being retried`, tone: 'warn' };
  return { label: 'Working', tone: 'ok' };
}

/** The JSON sent, indented for reading (the exact bytes are in the API's delivery log). */
export function readableJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
