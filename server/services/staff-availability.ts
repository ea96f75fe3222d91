import { and, asc, eq, sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { businesses, staff } from '@/db/schema';
import { AppError } from '@/server/errors';
import { recordEvents } from '@/server/services/events/record';
import type { EventActor } from '@/server/services/events/types';
import { openingClock, type OpeningClock } from '@/server/shared/opening-hours';
import { businessOpeningHours, type AppliedOpeningHours } from './opening-hours';

/**
 * Who is available (docs/api.md#staff-availability): a staff member is available when they are
 * active, on shift now and not away. On shift: within their own weekly schedule when they have one,
 * in their location's time zone, else within their location's opening hours (the business's when
 * they have no location). Assignment gives conversations only to available staff with room.
 */

/** Conversations waiting for a staff member's reply that assignment gives them at most, when neither they nor the business say. */
export const DEFAULT_CAPACITY = 10;

export type StaffShift = {
  staffId: number;
  name: string;
  locationId: number | null;
  away: boolean;
  awayChangedAt: Date | null;
  /** Their working hours' clock: their own schedule's, else their location's opening hours'. */
  shift: OpeningClock;
  /** Their own schedule (true) or their location's hours (false). */
  ownSchedule: boolean;
  /** Whose hours they work when not their own: their location's, the business's, or none set. */
  hoursSource: AppliedOpeningHours['source'];
  /** The most conversations waiting for their reply assignment gives them. */
  capacity: number;
  /** Their capacity is their own (true) or the business's default (false). */
  ownCapacity: boolean;
};

export type Availability = StaffShift & { onShift: boolean; available: boolean };

/** The active staff of a business with their shift clocks and capacities, by name. */
export async function staffShifts(businessId: number, tx: Tx = db): Promise<StaffShift[]> {
  const [[business], rows, hours] = await Promise.all([
    tx.select({ settings: businesses.settings }).from(businesses).where(eq(businesses.id, businessId)),
    tx
      .select({
        id: staff.id,
        name: staff.name,
        locationId: staff.locationId,
        away: staff.away,
        awayChangedAt: staff.awayChangedAt,
        schedule: staff.schedule,
        capacity: staff.capacity,
      })
      .from(staff)
      .where(and(eq(staff.businessId, businessId), eq(staff.active, true)))
      .orderBy(asc(staff.name), asc(staff.id)),
    businessOpeningHours(businessId, tx),
  ]);
  const defaultCapacity = business?.settings.assignment_capacity ?? DEFAULT_CAPACITY;
  return rows.map((r) => {
    const workplace = hours.forLocation(r.locationId);
    return {
      staffId: r.id,
      name: r.name,
      locationId: r.locationId,
      away: r.away,
      awayChangedAt: r.awayChangedAt,
      shift: openingClock(r.schedule ? { ...r.schedule, timeZone: workplace.timeZone } : workplace),
      ownSchedule: r.schedule !== null,
      hoursSource: workplace.source,
      capacity: r.capacity ?? defaultCapacity,
      ownCapacity: r.capacity !== null,
    };
  });
}

/** Each active staff member's availability at `at`. */
export async function staffAvailability(businessId: number, at: Date = new Date(), tx: Tx = db): Promise<Availability[]> {
  return (await staffShifts(businessId, tx)).map((s) => {
    const onShift = s.shift.isOpen(at);
    return { ...s, onShift, available: onShift && !s.away };
  });
}

/**
 * The Away switch: sets a staff member away or back, and logs `staff.availability_changed` in the
 * same transaction when it changed (nothing when it did not). Auto-assignment hears of it from the
 * log: coming back gives them waiting conversations, going away may hand theirs back (the business's
 * `hand_back_on_away`). 404 for staff not of the business.
 */
export async function setStaffAway(
  businessId: number,
  staffId: number,
  away: boolean,
  actor: EventActor,
  tx: Tx = db,
): Promise<{ staffId: number; away: boolean; changedAt: Date | null }> {
  return tx.transaction(async (tx) => {
    const [before] = await tx
      .select({ away: staff.away, changedAt: staff.awayChangedAt })
      .from(staff)
      .where(and(eq(staff.businessId, businessId), eq(staff.id, staffId)))
      .for('update');
    if (!before) throw AppError.notFound('Staff');
    if (before.away === away) return { staffId, away, changedAt: before.changedAt };
    const [after] = await tx
      .update(staff)
      .set({ away, awayChangedAt: sql`now()`, updatedAt: sql`now()` })
      .where(and(eq(staff.businessId, businessId), eq(staff.id, staffId)))
      .returning({ changedAt: staff.awayChangedAt });
    await recordEvents([{ type: 'staff.availability_changed', businessId, actor, data: { staff_id: staffId, away } }], tx);
    return { staffId, away, changedAt: after!.changedAt };
  });
}
