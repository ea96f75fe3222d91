import { and, asc, count, desc, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import { appointments, messages, reviewRequests } from '@/db/schema';
import { equalsAny } from '@/db/sql-array';
import { db, type Tx } from '@/server/db/client';
import { AppError } from '@/server/errors';
import type { AppointmentListQuery } from '@/server/schemas/appointments';
import { formatDuration, MAX_LISTED_REMINDERS } from '@/server/shared/appointments';
import { requireIn } from './refs';

/** Reading appointments (docs/api.md#appointments): one by the platform's id, or a page of them. */

export type AppointmentRow = typeof appointments.$inferSelect;

/** A reminder of an appointment with its message's status and times: what its answer and the inbox's card show. */
export type ListedReminder = {
  message_id: number;
  before_seconds: number;
  asks_confirmation: boolean;
  for_starts_at: Date;
  status: string;
  send_at: Date | null;
  sent_at: Date;
  status_updated_at: Date;
};

/**
 * Each appointment's reminders, oldest first: at most MAX_LISTED_REMINDERS, those still counted
 * for their time (pending, or gone: `active`) before those a change canceled, the latest first in
 * each; `truncated` when some were left out. One index probe per appointment, whatever their number.
 */
export async function listedReminders(
  businessId: number,
  appointmentIds: number[],
  tx: Tx,
): Promise<Map<number, { reminders: ListedReminder[]; truncated: boolean }>> {
  if (appointmentIds.length === 0) return new Map();
  const rows = await tx.execute<ListedReminder & { appointment_id: number }>(sql`
    select a.id as appointment_id, x.*
    from unnest(${sql.param(appointmentIds)}::int[]) as a(id)
    cross join lateral (
      select r.message_id, r.before_seconds, r.asks_confirmation, r.for_starts_at,
             m.status, m.send_at, m.sent_at, m.status_updated_at
      from appointment_reminders r join messages m on m.business_id = r.business_id and m.id = r.message_id
      where r.business_id = ${businessId} and r.appointment_id = a.id
      order by r.active desc, r.message_id desc
      limit ${MAX_LISTED_REMINDERS + 1}) x`);
  const byAppointment = new Map<number, ListedReminder[]>();
  for (const { appointment_id, ...r } of rows) {
    const list = byAppointment.get(appointment_id) ?? [];
    list.push({
      ...r,
      message_id: Number(r.message_id),
      for_starts_at: new Date(r.for_starts_at),
      send_at: r.send_at && new Date(r.send_at),
      sent_at: new Date(r.sent_at),
      status_updated_at: new Date(r.status_updated_at),
    });
    byAppointment.set(appointment_id, list);
  }
  return new Map(
    [...byAppointment].map(([id, list]) => [
      id,
      {
        reminders: list.slice(0, MAX_LISTED_REMINDERS).sort((a, b) => a.message_id - b.message_id),
        truncated: list.length > MAX_LISTED_REMINDERS,
      },
    ]),
  );
}

const reminderOut = (r: ListedReminder) => ({
  message_id: r.message_id,
  before: formatDuration(r.before_seconds),
  asks_confirmation: r.asks_confirmation,
  status: r.status,
  send_at: r.send_at?.toISOString() ?? null,
  for_starts_at: r.for_starts_at.toISOString(),
});

/** Each appointment's latest review request (docs/api.md#review-requests), with its message's channel, status and time. */
async function reviewRequestsOf(businessId: number, ids: number[], tx: Tx) {
  if (ids.length === 0) return new Map<number, ReviewRequestOut>();
  const rows = await tx
    .selectDistinctOn([reviewRequests.appointmentId], {
      appointmentId: reviewRequests.appointmentId,
      messageId: reviewRequests.messageId,
      messageType: messages.messageType,
      status: messages.status,
      sendAt: messages.sendAt,
      errorCode: messages.errorCode,
    })
    .from(reviewRequests)
    .innerJoin(messages, and(eq(messages.businessId, reviewRequests.businessId), eq(messages.id, reviewRequests.messageId)))
    .where(and(eq(reviewRequests.businessId, businessId), equalsAny(reviewRequests.appointmentId, ids, 'int')))
    .orderBy(asc(reviewRequests.appointmentId), desc(reviewRequests.messageId));
  return new Map(
    rows.map((r) => [
      r.appointmentId,
      {
        message_id: r.messageId,
        channel: r.messageType === 'EMAIL' ? ('email' as const) : ('sms' as const),
        status: r.status,
        send_at: r.sendAt?.toISOString() ?? null,
        error_code: r.errorCode,
      },
    ]),
  );
}

type ReviewRequestOut = {
  message_id: number;
  channel: 'sms' | 'email';
  status: string;
  send_at: string | null;
  error_code: string | null;
};

function toAppointment(
  a: AppointmentRow,
  listed: { reminders: ListedReminder[]; truncated: boolean } | undefined,
  reviewRequest: ReviewRequestOut | null,
) {
  return {
    appointment_id: a.id,
    business_id: a.businessId,
    external_id: a.externalId,
    client_id: a.clientId,
    location_id: a.locationId,
    staff_id: a.staffId,
    starts_at: a.startsAt.toISOString(),
    ends_at: a.endsAt.toISOString(),
    service: a.service,
    status: a.status,
    notes: a.notes,
    reminders: listed?.reminders.map(reminderOut) ?? [],
    reminders_truncated: listed?.truncated ?? false,
    review_request: reviewRequest,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}

export async function appointmentOut(a: AppointmentRow, tx: Tx) {
  const [reminders, reviews] = await Promise.all([
    listedReminders(a.businessId, [a.id], tx),
    reviewRequestsOf(a.businessId, [a.id], tx),
  ]);
  return toAppointment(a, reminders.get(a.id), reviews.get(a.id) ?? null);
}

/** The appointment with the platform's id, if this business has it; `lock`: FOR UPDATE, until the transaction ends. */
export async function findAppointment(
  businessId: number,
  externalId: string,
  options: { lock?: boolean },
  tx: Tx,
): Promise<AppointmentRow | undefined> {
  const query = tx
    .select()
    .from(appointments)
    .where(and(eq(appointments.businessId, businessId), eq(appointments.externalId, externalId)));
  const [row] = await (options.lock ? query.for('update') : query);
  return row;
}

/** GET …/appointments/{external_id}: another business's, or an unknown one, is a 404. */
export async function getAppointment(businessId: number, externalId: string, tx: Tx = db) {
  const row = await findAppointment(businessId, externalId, {}, tx);
  if (!row) throw AppError.notFound('Appointment');
  return appointmentOut(row, tx);
}

/** GET …/appointments: by start (then id), filtered by start range, status, client and location. */
export async function listAppointments(businessId: number, q: z.output<typeof AppointmentListQuery>, tx: Tx = db) {
  if (q.client_id !== undefined) await requireIn(businessId, 'client', q.client_id, ['query', 'client_id'], tx);
  if (q.location_id !== undefined) await requireIn(businessId, 'location', q.location_id, ['query', 'location_id'], tx);
  const conditions: (SQL | undefined)[] = [
    eq(appointments.businessId, businessId),
    q.from && gte(appointments.startsAt, q.from),
    q.to && lt(appointments.startsAt, q.to),
    q.status && eq(appointments.status, q.status),
    q.client_id !== undefined ? eq(appointments.clientId, q.client_id) : undefined,
    q.location_id !== undefined ? eq(appointments.locationId, q.location_id) : undefined,
  ];
  const where = and(...conditions);
  const [rows, [total]] = await Promise.all([
    tx
      .select()
      .from(appointments)
      .where(where)
      .orderBy(asc(appointments.startsAt), asc(appointments.id))
      .limit(q.page_size)
      .offset((q.page - 1) * q.page_size),
    tx.select({ n: count() }).from(appointments).where(where),
  ]);
  const ids = rows.map((r) => r.id);
  const [reminders, reviews] = await Promise.all([listedReminders(businessId, ids, tx), reviewRequestsOf(businessId, ids, tx)]);
  const totalCount = Number(total?.n ?? 0);
  return {
    appointments: rows.map((r) => toAppointment(r, reminders.get(r.id), reviews.get(r.id) ?? null)),
    total_appointments: totalCount,
    page: q.page,
    page_size: q.page_size,
    next_page: q.page * q.page_size < totalCount,
  };
}

/** The conversation of the appointment's client, if one exists yet (events of it are ordered with its messages). */
export async function conversationOfClient(businessId: number, clientId: number, tx: Tx): Promise<number | null> {
  const [row] = await tx.execute<{ id: number }>(
    sql`select id from conversations where business_id = ${businessId} and client_id = ${clientId} order by id limit 1`,
  );
  return row?.id ?? null;
}
