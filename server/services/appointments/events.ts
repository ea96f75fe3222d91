import type { Tx } from '@/server/db/client';
import { recordEvents } from '@/server/services/events/record';
import type { APPOINTMENT_FIELDS, EventActor } from '@/server/services/events/types';
import type { AppointmentStatus } from '@/server/shared/appointments';
import { conversationOfClient, type AppointmentRow } from './read';

/**
 * The log's appointment events (docs/api.md#events), written in the change's transaction. Each is
 * filed under the client and, when it has one, the client's conversation, so an endpoint receives
 * an appointment's events in order with the messages around them (a reminder, the reply).
 */

export type AppointmentField = (typeof APPOINTMENT_FIELDS)[number];
export type OutcomeType =
  'appointment.confirmed' | 'appointment.reschedule_requested' | 'appointment.cancel_requested' | 'appointment.canceled';

const dataOf = (a: AppointmentRow) => ({
  appointment_id: a.id,
  external_id: a.externalId,
  client_id: a.clientId,
  location_id: a.locationId,
  staff_id: a.staffId,
  starts_at: a.startsAt.toISOString(),
  ends_at: a.endsAt.toISOString(),
  status: a.status,
});

async function where(a: AppointmentRow, tx: Tx) {
  return {
    businessId: a.businessId,
    clientId: a.clientId,
    conversationId: await conversationOfClient(a.businessId, a.clientId, tx),
  };
}

export async function recordCreated(a: AppointmentRow, actor: EventActor, tx: Tx) {
  await recordEvents([{ type: 'appointment.created', ...(await where(a, tx)), actor, data: dataOf(a) }], tx);
}

export async function recordUpdated(
  a: AppointmentRow,
  previous: AppointmentRow,
  fields: AppointmentField[],
  actor: EventActor,
  tx: Tx,
) {
  await recordEvents(
    [
      {
        type: 'appointment.updated',
        ...(await where(a, tx)),
        actor,
        data: { ...dataOf(a), fields, previous_starts_at: previous.startsAt.toISOString(), previous_status: previous.status },
      },
    ],
    tx,
  );
}

/** A reply's or staff's outcome; `messageId`: the client's message that caused it (null for staff or the API). */
export async function recordOutcome(
  type: OutcomeType,
  a: AppointmentRow,
  previousStatus: AppointmentStatus,
  messageId: number | null,
  actor: EventActor,
  tx: Tx,
) {
  await recordEvents(
    [
      {
        type,
        ...(await where(a, tx)),
        messageId,
        actor,
        data: { ...dataOf(a), previous_status: previousStatus, message_id: messageId },
      },
    ],
    tx,
  );
}
