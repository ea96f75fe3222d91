import { and, eq, sql } from 'drizzle-orm';
import { clearNeedsAttentionFor } from '@/server/services/conversations/needs-attention';
import type { z } from 'zod';
import { appointments } from '@/db/schema';
import { db, type Tx } from '@/server/db/client';
import { AppError, type ValidationIssue } from '@/server/errors';
import type { PutAppointmentRequest } from '@/server/schemas/appointments';
import type { EventActor } from '@/server/services/events/types';
import { recordCreated, recordUpdated, type AppointmentField } from './events';
import { appointmentOut, findAppointment, type AppointmentRow } from './read';
import { resolveRef, resolveStaff } from './refs';
import { syncAppointmentMessages } from './follow-ups';

/**
 * PUT …/appointments/{external_id} (docs/api.md#appointments): the platform's appointment, created
 * (201, `appointment.created`) or updated (200, `appointment.updated` naming the fields that
 * changed). The same body again changes nothing and logs nothing. The row is locked for the whole
 * change, so two upserts of one appointment (and its reminders) happen one after the other.
 */

type Body = z.output<typeof PutAppointmentRequest>;
type UpsertResult = { created: boolean; appointment: Awaited<ReturnType<typeof appointmentOut>> };

/** Fields whose change rewrites pending reminders' words. */
const WORDING: readonly AppointmentField[] = ['client_id', 'location_id', 'staff_id', 'service'];

export async function upsertAppointment(
  businessId: number,
  externalId: string,
  body: Body,
  actor: EventActor,
  now = new Date(),
  tx: Tx = db,
): Promise<UpsertResult> {
  return tx.transaction(async (tx) => {
    const issues: ValidationIssue[] = [];
    if (body.client_id !== undefined && body.client_external_id !== undefined) {
      issues.push({
        loc: ['body', 'client_external_id'],
        msg: 'give client_id or client_external_id, not both',
        type: 'value_error',
      });
    } else if (body.client_id === undefined && body.client_external_id === undefined) {
      issues.push({ loc: ['body', 'client_id'], msg: 'give client_id or client_external_id', type: 'missing' });
    }
    if (body.starts_at.getTime() >= body.ends_at.getTime()) {
      issues.push({ loc: ['body', 'ends_at'], msg: 'must be after starts_at', type: 'value_error' });
    }
    const clientId = issues.length
      ? undefined
      : await resolveRef(businessId, 'client', { id: body.client_id, externalId: body.client_external_id }, issues, tx);
    const locationId = await resolveRef(
      businessId,
      'location',
      { id: body.location_id, externalId: body.location_external_id },
      issues,
      tx,
    );
    const staffId = await resolveStaff(businessId, body.staff_id, issues, tx);
    if (issues.length) throw new AppError('validation', 'Invalid appointment', { issues });

    const values = {
      clientId: clientId!,
      ...(locationId !== undefined && { locationId }),
      ...(staffId !== undefined && { staffId }),
      startsAt: body.starts_at,
      endsAt: body.ends_at,
      ...(body.service !== undefined && { service: body.service || null }),
      ...(body.status !== undefined && { status: body.status }),
      ...(body.notes !== undefined && { notes: body.notes }),
    };
    // Found first: an appointment that exists (the same calendar upserted every night) must not take
    // a value of the id sequence (int4), as INSERT … ON CONFLICT does even when it conflicts.
    let previous = await findAppointment(businessId, externalId, { lock: true }, tx);
    if (!previous) {
      const [inserted] = await tx
        .insert(appointments)
        .values({ businessId, externalId, ...values })
        .onConflictDoNothing({ target: [appointments.businessId, appointments.externalId] })
        .returning();
      if (inserted) {
        await syncAppointmentMessages(inserted, null, { now, actor, rewrite: false }, tx);
        await recordCreated(inserted, actor, tx);
        return { created: true, appointment: await appointmentOut(inserted, tx) };
      }
      // Another request created it since we looked (the insert waited for it to commit): update that row.
      previous = (await findAppointment(businessId, externalId, { lock: true }, tx))!;
    }
    const fields = changedFields(previous, values);
    if (fields.length === 0) return { created: false, appointment: await appointmentOut(previous, tx) };
    const [updated] = await tx
      .update(appointments)
      .set({ ...values, updatedAt: sql`now()` })
      .where(and(eq(appointments.businessId, businessId), eq(appointments.id, previous.id)))
      .returning();
    await afterChange(updated!, previous, fields, actor, now, tx);
    return { created: false, appointment: await appointmentOut(updated!, tx) };
  });
}

/** Reminders brought in line, then `appointment.updated`: what every change of an appointment does. */
async function afterChange(
  updated: AppointmentRow,
  previous: AppointmentRow,
  fields: AppointmentField[],
  actor: EventActor,
  now: Date,
  tx: Tx,
) {
  if (fields.some((f) => f !== 'notes' && f !== 'ends_at')) {
    await syncAppointmentMessages(updated, previous.status, { now, actor, rewrite: fields.some((f) => WORDING.includes(f)) }, tx);
  }
  // A PUT that confirms or cancels it decides it, as the outcome paths do (outcomes.ts).
  if (updated.status !== previous.status && (updated.status === 'confirmed' || updated.status === 'canceled'))
    await clearNeedsAttentionFor(updated.businessId, updated.id, tx);
  await recordUpdated(updated, previous, fields, actor, tx);
}

type Values = Partial<
  Pick<AppointmentRow, 'clientId' | 'locationId' | 'staffId' | 'startsAt' | 'endsAt' | 'service' | 'status' | 'notes'>
>;

const COLUMN: Record<AppointmentField, keyof Values> = {
  client_id: 'clientId',
  location_id: 'locationId',
  staff_id: 'staffId',
  starts_at: 'startsAt',
  ends_at: 'endsAt',
  service: 'service',
  status: 'status',
  notes: 'notes',
};

/** The fields `values` changes (left-out ones never do). */
function changedFields(row: AppointmentRow, values: Values): AppointmentField[] {
  const same = (a: unknown, b: unknown) => (a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b);
  return (Object.keys(COLUMN) as AppointmentField[]).filter((f) => {
    const column = COLUMN[f];
    return column in values && !same(values[column], row[column]);
  });
}
