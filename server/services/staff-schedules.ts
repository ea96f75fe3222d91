import { and, asc, eq, sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { conversations, staff } from '@/db/schema';
import { AppError } from '@/server/errors';
import { scheduleOut } from '@/server/schemas/opening-hours';
import { openingClock, type Schedule } from '@/server/shared/opening-hours';
import type { StaffScheduleSource } from '@/server/shared/staff-availability';
import { waitingForReply } from './conversations/waiting';
import type { EventActor } from './events/types';
import { businessOpeningHours, openingHoursOf, type AppliedOpeningHours } from './opening-hours';
import { setStaffAway, staffAvailability } from './staff-availability';
import { scheduleSweep } from './assignment';

/**
 * Staff schedules and availability over REST and the inbox (docs/api.md#staff-availability). Who
 * is on shift and available is staffAvailability's answer (staff-availability.ts), the one auto-
 * assignment reads; this adds what people are shown: whose schedule, the clock's next change, the
 * capacity in force and how many conversations wait for each one's reply.
 */

const iso = (d: Date | null) => d?.toISOString() ?? null;

/** A staff member of the business, active or not (404 otherwise): what their schedule and availability are read from. */
export async function staffOf(businessId: number, staffId: number, tx: Tx = db) {
  const [row] = await tx
    .select({ id: staff.id, name: staff.name, locationId: staff.locationId, active: staff.active, schedule: staff.schedule })
    .from(staff)
    .where(and(eq(staff.businessId, businessId), eq(staff.id, staffId)));
  if (!row) throw AppError.notFound('Staff');
  return row;
}

/**
 * The hours a staff member works: their own schedule, read in their workplace's time zone, else
 * their workplace's opening hours (their location's, else the business's). The rule staffShifts
 * applies; staff-schedules.test.ts checks the two agree.
 */
function workingHours(schedule: Schedule | null, workplace: AppliedOpeningHours) {
  return {
    source: (schedule ? 'own' : workplace.source) as StaffScheduleSource,
    hours: schedule ? { ...schedule, timeZone: workplace.timeZone } : workplace,
  };
}

type StaffRow = { id: number; name: string; locationId: number | null; schedule: Schedule | null };

/** A staff member's schedule as the API answers it: the hours in force, whose, and the clock's reading at `at`. */
function scheduleView(businessId: number, row: StaffRow, workplace: AppliedOpeningHours, at: Date) {
  const { source, hours } = workingHours(row.schedule, workplace);
  const clock = openingClock(hours);
  return {
    staff_id: row.id,
    business_id: businessId,
    location_id: row.locationId,
    source,
    time_zone: hours.timeZone,
    ...scheduleOut(hours),
    status: {
      at: at.toISOString(),
      on_shift: clock.isOpen(at),
      next_shift_start: iso(clock.nextOpening(at)),
      next_shift_end: iso(clock.nextClosing(at)),
    },
  };
}

/** GET …/staffs/{staff_id}/schedule: the schedule in force, whose it is, and the clock's reading at `at`. */
export async function getStaffSchedule(businessId: number, staffId: number, at: Date = new Date(), tx: Tx = db) {
  const row = await staffOf(businessId, staffId, tx);
  return scheduleView(businessId, row, await openingHoursOf(businessId, row.locationId, tx), at);
}

/** The inbox's Staff schedules page: each active staff member's schedule, by name, read now. */
export async function staffSchedules(businessId: number, tx: Tx = db) {
  const [rows, hours] = await Promise.all([
    tx
      .select({ id: staff.id, name: staff.name, locationId: staff.locationId, schedule: staff.schedule })
      .from(staff)
      .where(and(eq(staff.businessId, businessId), eq(staff.active, true)))
      .orderBy(asc(staff.name), asc(staff.id)),
    businessOpeningHours(businessId, tx),
  ]);
  const now = new Date();
  return rows.map((r) => ({ name: r.name, ...scheduleView(businessId, r, hours.forLocation(r.locationId), now) }));
}

/**
 * PUT (a schedule, valid by OpeningHoursInput) and DELETE (null: they follow their location's
 * opening hours again) …/staffs/{staff_id}/schedule; answers as GET, read now.
 */
export async function setStaffSchedule(businessId: number, staffId: number, schedule: Schedule | null, tx: Tx = db) {
  const [row] = await tx
    .update(staff)
    .set({ schedule, updatedAt: sql`now()` })
    .where(and(eq(staff.businessId, businessId), eq(staff.id, staffId)))
    .returning({ id: staff.id });
  if (!row) throw AppError.notFound('Staff');
  // They may be on shift now: assignment looks again (docs/api.md#auto-assignment).
  await scheduleSweep(businessId, 'now', tx);
  return getStaffSchedule(businessId, staffId, new Date(), tx);
}

/** GET /businesses/{business_id}/availability: every active staff member's state at `at` (the waiting counts are now's). */
export async function getAvailability(businessId: number, at: Date = new Date(), tx: Tx = db) {
  const [states, waiting] = await Promise.all([
    staffAvailability(businessId, at, tx),
    tx
      .select({ staffId: conversations.assignedStaffId, count: sql<number>`count(*)::int` })
      .from(conversations)
      .where(and(eq(conversations.businessId, businessId), waitingForReply(sql.raw('conversations'))))
      .groupBy(conversations.assignedStaffId),
  ]);
  const waitingOf = new Map(waiting.map((w) => [w.staffId, w.count]));
  return {
    at: at.toISOString(),
    staff: states.map((s) => {
      return {
        staff_id: s.staffId,
        name: s.name,
        location_id: s.locationId,
        away: s.away,
        away_changed_at: iso(s.awayChangedAt),
        on_shift: s.onShift,
        available: s.available,
        schedule_source: (s.ownSchedule ? 'own' : s.hoursSource) as StaffScheduleSource,
        next_shift_change: iso(s.onShift ? s.shift.nextClosing(at) : s.shift.nextOpening(at)),
        capacity: s.capacity,
        capacity_source: s.ownCapacity ? ('own' as const) : ('business' as const),
        waiting: waitingOf.get(s.staffId) ?? 0,
      };
    }),
  };
}

/**
 * PUT …/staffs/{staff_id}/availability: the Away switch (setStaffAway, which logs
 * `staff.availability_changed` as `actor`) and the capacity (null: the business's default), in
 * one transaction. Only active staff have an availability: another is a 404. Answers their state now.
 */
export async function setAvailability(
  businessId: number,
  staffId: number,
  change: { away?: boolean; capacity?: number | null },
  actor: EventActor,
  tx: Tx = db,
) {
  return tx.transaction(async (tx) => {
    const row = await staffOf(businessId, staffId, tx);
    if (!row.active) throw AppError.notFound('Staff');
    if (change.capacity !== undefined) {
      await tx
        .update(staff)
        .set({ capacity: change.capacity, updatedAt: sql`now()` })
        .where(and(eq(staff.businessId, businessId), eq(staff.id, staffId)));
      // More room may take waiting conversations at once (docs/api.md#auto-assignment).
      await scheduleSweep(businessId, 'now', tx);
    }
    if (change.away !== undefined) await setStaffAway(businessId, staffId, change.away, actor, tx);
    const { staff: all } = await getAvailability(businessId, new Date(), tx);
    return all.find((s) => s.staff_id === staffId)!;
  });
}
