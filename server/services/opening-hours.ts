import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import { equalsAny } from '@/db/sql-array';
import { db, type Tx } from '@/server/db/client';
import { businesses, locations, openingHours } from '@/db/schema';
import { AppError } from '@/server/errors';
import { scheduleOut } from '@/server/schemas/opening-hours';
import {
  ALWAYS_OPEN,
  openingClock,
  type OpeningHours,
  type OpeningHoursSource,
  type Schedule,
} from '@/server/shared/opening-hours';

/**
 * Opening hours (docs/api.md#opening-hours): which hours apply where, and their settings over REST,
 * onboarding and the inbox. The rules of the clock itself are in server/shared/opening-hours.ts.
 *
 * For features that depend on them (an answer after hours, assignment at the opening):
 *
 *   const hours = await openingHoursOf(businessId, conversation.locationId, tx);
 *   openingClock(hours).isOpen(now);
 *
 * or, for many locations of one business, `businessOpeningHours(businessId, tx)` once and
 * `.forLocation(id)` for each. A location keeps to its own hours, else the business's, else the
 * default (open around the clock); its clock is its own time zone, else the business's.
 */

/** The hours that apply to a location (or to the business: `locationId` null), with whose they are. */
export type AppliedOpeningHours = OpeningHours & {
  businessId: number;
  locationId: number | null;
  source: OpeningHoursSource;
};

/** A zone Intl knows, else null (a stored zone is checked when written; this keeps a bad one from failing every read). */
export function knownZone(zone: string | null | undefined): string | null {
  if (!zone) return null;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone;
  } catch {
    return null;
  }
}

type Row = { locationId: number | null; weekly: Schedule['weekly']; exceptions: Schedule['exceptions'] };

/** Everything one business's hours depend on: its zone, its locations' zones and the stored schedules. */
async function readHours(businessId: number, locationIds: number[] | 'all', tx: Tx) {
  const [[business], zones, rows] = await Promise.all([
    tx.select({ timeZone: businesses.timezone }).from(businesses).where(eq(businesses.id, businessId)),
    tx
      .select({ id: locations.id, name: locations.name, timeZone: locations.timezone })
      .from(locations)
      .where(
        and(
          eq(locations.businessId, businessId),
          locationIds === 'all' ? undefined : equalsAny(locations.id, locationIds, 'int'),
        ),
      )
      .orderBy(asc(locations.name), asc(locations.id)),
    tx
      .select({ locationId: openingHours.locationId, weekly: openingHours.weekly, exceptions: openingHours.exceptions })
      .from(openingHours)
      .where(
        and(
          eq(openingHours.businessId, businessId),
          locationIds === 'all'
            ? undefined
            : sql`(${openingHours.locationId} is null or ${equalsAny(openingHours.locationId, locationIds, 'int')})`,
        ),
      ),
  ]);
  if (!business) throw AppError.notFound('Business');
  const own = new Map<number | null, Row>(rows.map((r) => [r.locationId, r]));
  const businessZone = knownZone(business.timeZone) ?? 'UTC';
  const locationById = new Map(zones.map((l) => [l.id, l]));

  const forLocation = (locationId: number | null): AppliedOpeningHours => {
    const location = locationId === null ? undefined : locationById.get(locationId);
    const mine = location ? own.get(location.id) : undefined;
    const theirs = own.get(null);
    const schedule: Schedule = mine ?? theirs ?? ALWAYS_OPEN;
    return {
      businessId,
      locationId: location ? location.id : null,
      source: mine ? 'location' : theirs ? 'business' : 'default',
      timeZone: knownZone(location?.timeZone) ?? businessZone,
      weekly: schedule.weekly,
      exceptions: schedule.exceptions,
    };
  };
  return { locations: zones, has: (id: number) => locationById.has(id), forLocation };
}

/**
 * All of a business's hours, read in one go: `forLocation(id)` is what applies at that location
 * (an unknown or null id: the business's own).
 */
export async function businessOpeningHours(businessId: number, tx: Tx = db) {
  const { forLocation } = await readHours(businessId, 'all', tx);
  return { forLocation };
}

/** The hours that apply at one location of the business, or the business's own (`locationId` null). 404 for a location not in the business. */
export async function openingHoursOf(businessId: number, locationId: number | null, tx: Tx = db): Promise<AppliedOpeningHours> {
  const hours = await readHours(businessId, locationId === null ? [] : [locationId], tx);
  if (locationId !== null && !hours.has(locationId)) throw AppError.notFound('Location');
  return hours.forLocation(locationId);
}

/** What the API answers: the hours that apply, whose they are, and the clock's reading at `at`. */
export function openingHoursView(hours: AppliedOpeningHours, at: Date = new Date()) {
  const clock = openingClock(hours);
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  return {
    business_id: hours.businessId,
    location_id: hours.locationId,
    source: hours.source,
    time_zone: hours.timeZone,
    ...scheduleOut(hours),
    status: {
      at: at.toISOString(),
      open: clock.isOpen(at),
      next_opening: iso(clock.nextOpening(at)),
      next_closing: iso(clock.nextClosing(at)),
    },
  };
}

/** GET …/opening-hours: the business's (`locationId` null) or a location's. */
export async function getOpeningHours(businessId: number, locationId: number | null, at: Date = new Date(), tx: Tx = db) {
  return openingHoursView(await openingHoursOf(businessId, locationId, tx), at);
}

/**
 * Several owners' schedules at once (REST and the inbox set one; onboarding many): a schedule
 * replaces the owner's own, null removes it (a location then keeps to the business's hours, the
 * business to the default). A row whose schedule does not change is not written. The schedules
 * are valid (OpeningHoursInput) and the locations the business's (the caller checked).
 */
export async function storeOpeningHours(
  businessId: number,
  entries: { locationId: number | null; schedule: Schedule | null }[],
  tx: Tx = db,
) {
  const sets = entries.filter((e) => e.schedule !== null);
  const clears = entries.filter((e) => e.schedule === null);
  if (sets.length > 0) {
    await tx
      .insert(openingHours)
      .values(
        sets.map((e) => ({
          businessId,
          locationId: e.locationId,
          weekly: e.schedule!.weekly,
          exceptions: e.schedule!.exceptions,
        })),
      )
      .onConflictDoUpdate({
        target: [openingHours.businessId, openingHours.locationId],
        set: { weekly: sql`excluded.weekly`, exceptions: sql`excluded.exceptions`, updatedAt: sql`now()` },
        setWhere: sql`(${openingHours.weekly}, ${openingHours.exceptions}) is distinct from (excluded.weekly, excluded.exceptions)`,
      });
  }
  const clearedLocations = clears.flatMap((e) => (e.locationId === null ? [] : [e.locationId]));
  if (clearedLocations.length > 0) {
    await tx
      .delete(openingHours)
      .where(and(eq(openingHours.businessId, businessId), equalsAny(openingHours.locationId, clearedLocations, 'int')));
  }
  if (clears.some((e) => e.locationId === null)) {
    await tx.delete(openingHours).where(and(eq(openingHours.businessId, businessId), isNull(openingHours.locationId)));
  }
}

/** PUT …/opening-hours: the owner's own schedule (404 for a location not in the business); answers as GET. */
export async function setOpeningHours(businessId: number, locationId: number | null, schedule: Schedule, tx: Tx = db) {
  await openingHoursOf(businessId, locationId, tx);
  await storeOpeningHours(businessId, [{ locationId, schedule }], tx);
  return getOpeningHours(businessId, locationId, new Date(), tx);
}

/** DELETE …/locations/{id}/opening-hours: the location keeps to the business's hours again. */
export async function clearLocationOpeningHours(businessId: number, locationId: number, tx: Tx = db) {
  await openingHoursOf(businessId, locationId, tx);
  await storeOpeningHours(businessId, [{ locationId, schedule: null }], tx);
  return getOpeningHours(businessId, locationId, new Date(), tx);
}

/** The inbox's settings page: the business's hours and each location's (own or the business's), read now. */
export async function openingHoursSettings(businessId: number, tx: Tx = db) {
  const hours = await readHours(businessId, 'all', tx);
  const now = new Date();
  return {
    business: openingHoursView(hours.forLocation(null), now),
    locations: hours.locations.map((l) => ({ name: l.name, ...openingHoursView(hours.forLocation(l.id), now) })),
  };
}
