import { and, eq, sql } from 'drizzle-orm';
import { clearNeedsAttentionFor } from '@/server/services/conversations/needs-attention';
import { appointments } from '@/db/schema';
import { db, type Tx } from '@/server/db/client';
import { AppError } from '@/server/errors';
import type { EventActor } from '@/server/services/events/types';
import type { AppointmentStatus } from '@/server/shared/appointments';
import { recordOutcome, type OutcomeType } from './events';
import { appointmentOut, findAppointment, type AppointmentRow } from './read';
import { syncAppointmentMessages } from './follow-ups';

/**
 * What a client's reply (docs/api.md#appointments, item 3's reader), staff or the API decide about
 * an appointment: confirm, a request to reschedule, a request to cancel (neither changes it: staff
 * or the platform decide), and cancel. Each locks the appointment, changes what it changes, brings
 * its reminders in line and logs its event with the client's message that caused it, if any. An
 * outcome that changes nothing (confirming a confirmed appointment, canceling a canceled one) logs
 * nothing. Each answers the appointment and whether it changed (`changed: false`: nothing logged).
 */

/** Who decided, and the client's message that said so (null: staff or the API). */
type OutcomeSource = { actor: EventActor; messageId?: number | null; now?: Date };

async function locked(businessId: number, appointmentId: number, tx: Tx): Promise<AppointmentRow> {
  const [row] = await tx
    .select()
    .from(appointments)
    .where(and(eq(appointments.businessId, businessId), eq(appointments.id, appointmentId)))
    .for('update');
  if (!row) throw AppError.notFound('Appointment');
  return row;
}

async function setStatus(a: AppointmentRow, status: AppointmentStatus, tx: Tx): Promise<AppointmentRow> {
  const [row] = await tx
    .update(appointments)
    .set({ status, updatedAt: sql`now()` })
    .where(and(eq(appointments.businessId, a.businessId), eq(appointments.id, a.id)))
    .returning();
  return row!;
}

/** Which statuses an outcome applies to, and the status it sets (null: it changes nothing but is logged). */
const RULES: Record<OutcomeType, { from: readonly AppointmentStatus[]; to: AppointmentStatus | null }> = {
  'appointment.confirmed': { from: ['booked'], to: 'confirmed' },
  'appointment.reschedule_requested': { from: ['booked', 'confirmed'], to: null },
  'appointment.cancel_requested': { from: ['booked', 'confirmed'], to: null },
  'appointment.canceled': { from: ['booked', 'confirmed', 'completed', 'no_show'], to: 'canceled' },
};

async function decide(type: OutcomeType, businessId: number, appointmentId: number, source: OutcomeSource, tx: Tx) {
  return tx.transaction(async (tx) => {
    const a = await locked(businessId, appointmentId, tx);
    const rule = RULES[type];
    // Staff or the platform deciding it is acting on it: its conversation no longer needs attention for it.
    if (source.actor.type !== 'client' && (type === 'appointment.confirmed' || type === 'appointment.canceled')) {
      await clearNeedsAttentionFor(businessId, appointmentId, tx);
    }
    // A confirmed appointment confirmed again, or one no longer to come asked about: nothing to log.
    if (!rule.from.includes(a.status)) return { changed: false, appointment: await appointmentOut(a, tx) };
    const now = source.now ?? new Date();
    const after = rule.to === null ? a : await setStatus(a, rule.to, tx);
    if (rule.to !== null) await syncAppointmentMessages(after, a.status, { now, actor: source.actor, rewrite: false }, tx);
    await recordOutcome(type, after, a.status, source.messageId ?? null, source.actor, tx);
    return { changed: true, appointment: await appointmentOut(after, tx) };
  });
}

/** booked → confirmed; the pending reminders that ask for confirmation are canceled. */
export const confirmAppointment = (businessId: number, appointmentId: number, source: OutcomeSource, tx: Tx = db) =>
  decide('appointment.confirmed', businessId, appointmentId, source, tx);

/** The client asks to move it (booked or confirmed): logged, nothing changed; staff or the platform decide. */
export const requestReschedule = (businessId: number, appointmentId: number, source: OutcomeSource, tx: Tx = db) =>
  decide('appointment.reschedule_requested', businessId, appointmentId, source, tx);

/** The client says they cannot come (booked or confirmed): logged, nothing changed unless someone cancels it. */
export const requestCancel = (businessId: number, appointmentId: number, source: OutcomeSource, tx: Tx = db) =>
  decide('appointment.cancel_requested', businessId, appointmentId, source, tx);

/** → canceled (from any other status); its pending reminders are canceled. */
export const cancelAppointment = (businessId: number, appointmentId: number, source: OutcomeSource, tx: Tx = db) =>
  decide('appointment.canceled', businessId, appointmentId, source, tx);

/** DELETE …/appointments/{external_id}: cancel by the platform's id (404 when unknown); already canceled: no event. */
export async function cancelByExternalId(businessId: number, externalId: string, actor: EventActor, tx: Tx = db) {
  const row = await findAppointment(businessId, externalId, {}, tx);
  if (!row) throw AppError.notFound('Appointment');
  return (await cancelAppointment(businessId, row.id, { actor }, tx)).appointment;
}

type OpenReminder = {
  appointmentId: number;
  externalId: string;
  status: AppointmentStatus;
  startsAt: Date;
  /** The reminder that asked. */
  reminderMessageId: number;
  reminderSentAt: Date;
};

/**
 * For item 3's reply reader: the most recent reminder that asked this client, at this number, to
 * confirm an appointment that has not started at `at` and is still booked or confirmed, and that
 * went out before `at` (not scheduled, canceled or failed). Null when there is none: the reply is
 * an ordinary message.
 */
export async function openConfirmationReminder(
  businessId: number,
  clientId: number,
  phoneNumber: string,
  at: Date,
  tx: Tx = db,
): Promise<OpenReminder | null> {
  const [row] = await tx.execute<{
    appointment_id: number;
    external_id: string;
    status: AppointmentStatus;
    starts_at: string;
    message_id: number;
    sent_at: string;
  }>(sql`
    select a.id as appointment_id, a.external_id, a.status, a.starts_at, m.id as message_id, m.sent_at
    from appointments a
    join appointment_reminders r on r.business_id = a.business_id and r.appointment_id = a.id
    join messages m on m.business_id = r.business_id and m.id = r.message_id
    where a.business_id = ${businessId} and a.client_id = ${clientId}
      and a.starts_at > ${at.toISOString()}::timestamptz and a.status in ('booked', 'confirmed')
      and r.asks_confirmation and r.for_starts_at = a.starts_at
      and m.to_address = ${phoneNumber} and m.status in ('sent', 'delivered', 'read')
      and m.sent_at <= ${at.toISOString()}::timestamptz
    order by m.sent_at desc, m.id desc
    limit 1`);
  if (!row) return null;
  return {
    appointmentId: row.appointment_id,
    externalId: row.external_id,
    status: row.status,
    startsAt: new Date(row.starts_at),
    reminderMessageId: Number(row.message_id),
    reminderSentAt: new Date(row.sent_at),
  };
}
