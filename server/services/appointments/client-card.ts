import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { formatDuration, type AppointmentStatus } from '@/server/shared/appointments';
import { listedReminders, type ListedReminder } from './read';

/**
 * The inbox's Appointments card (docs/api.md#appointments): a client's next appointments and their
 * latest past ones, each with what the card shows — status, service, staff member, location and its
 * clock (the location's time zone, else the business's) — and its reminders with their times (as
 * many as an appointment's answer lists: listedReminders).
 */

/** How many upcoming and how many past appointments the card shows. */
const CARD_APPOINTMENTS = 5;

type CardReminder = {
  message_id: number;
  before: string;
  asks_confirmation: boolean;
  /** The message's status: `scheduled`, `sent`, `delivered`, `canceled`, `failed`… */
  status: string;
  /** When it goes (scheduled), went (sent), or was canceled or failed. */
  at: string;
  /** The reminder was written for an earlier start (the appointment moved since). */
  for_earlier_time: boolean;
};

type CardAppointment = {
  appointment_id: number;
  external_id: string;
  status: AppointmentStatus;
  starts_at: string;
  ends_at: string;
  service: string | null;
  staff_name: string | null;
  location_name: string | null;
  /** The clock the appointment is shown on: its location's time zone, else the business's. */
  time_zone: string;
  reminders: CardReminder[];
};

type Row = {
  id: number;
  external_id: string;
  status: AppointmentStatus;
  starts_at: string | Date;
  ends_at: string | Date;
  service: string | null;
  staff_name: string | null;
  location_name: string | null;
  time_zone: string | null;
  upcoming: boolean;
};

const iso = (v: string | Date) => new Date(v).toISOString();

/** A reminder as the card shows it: when it goes, went, or was canceled or failed; whether it was for an earlier start. */
const cardReminder = (r: ListedReminder, startsAt: string): CardReminder => ({
  message_id: r.message_id,
  before: formatDuration(r.before_seconds),
  asks_confirmation: r.asks_confirmation,
  status: r.status,
  at: iso(
    r.status === 'scheduled'
      ? (r.send_at ?? r.sent_at)
      : r.status === 'canceled' || r.status === 'failed'
        ? r.status_updated_at
        : r.sent_at,
  ),
  for_earlier_time: iso(r.for_starts_at) !== startsAt,
});

/** The client's next `CARD_APPOINTMENTS` appointments (soonest first) and last ones (latest first), at `now`. */
export async function clientAppointments(
  businessId: number,
  clientId: number,
  now: Date,
  tx: Tx = db,
): Promise<{ upcoming: CardAppointment[]; recent: CardAppointment[] }> {
  const at = now.toISOString();
  const rows = await tx.execute<Row>(sql`
    with chosen as (
      (select a.*, true as upcoming from appointments a
        where a.business_id = ${businessId} and a.client_id = ${clientId} and a.starts_at >= ${at}::timestamptz
        order by a.starts_at, a.id limit ${CARD_APPOINTMENTS})
      union all
      (select a.*, false as upcoming from appointments a
        where a.business_id = ${businessId} and a.client_id = ${clientId} and a.starts_at < ${at}::timestamptz
        order by a.starts_at desc, a.id desc limit ${CARD_APPOINTMENTS})
    )
    select c.id, c.external_id, c.status, c.starts_at, c.ends_at, c.service, c.upcoming,
           s.name as staff_name, l.name as location_name, coalesce(nullif(l.timezone, ''), b.timezone) as time_zone
    from chosen c
    join businesses b on b.id = c.business_id
    left join locations l on l.business_id = c.business_id and l.id = c.location_id
    left join staff s on s.business_id = c.business_id and s.id = c.staff_id
    order by c.upcoming desc, case when c.upcoming then c.starts_at end asc, c.starts_at desc, c.id`);
  const listed = await listedReminders(
    businessId,
    rows.map((r) => r.id),
    tx,
  );
  const out = (r: Row): CardAppointment => ({
    appointment_id: r.id,
    external_id: r.external_id,
    status: r.status,
    starts_at: iso(r.starts_at),
    ends_at: iso(r.ends_at),
    service: r.service,
    staff_name: r.staff_name,
    location_name: r.location_name,
    time_zone: r.time_zone || 'UTC',
    reminders: listed.get(r.id)?.reminders.map((x) => cardReminder(x, iso(r.starts_at))) ?? [],
  });
  return { upcoming: rows.filter((r) => r.upcoming).map(out), recent: rows.filter((r) => !r.upcoming).map(out) };
}
