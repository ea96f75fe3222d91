import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { staff } from '@/db/schema';
import { createLocation, createStaff, createTenant } from '@/server/testing/factories';
import { WEEKDAYS, type Schedule, type WeeklyHours } from '@/server/shared/opening-hours';
import { setOpeningHours } from './opening-hours';
import { DEFAULT_CAPACITY, setStaffAway, staffAvailability } from './staff-availability';

/** A schedule open 09:00–17:00 every day. */
const nineToFive: Schedule = {
  weekly: Object.fromEntries(WEEKDAYS.map((d) => [d, [{ start: 540, end: 1020 }]])) as WeeklyHours,
  exceptions: [],
};

describe('staff availability', () => {
  it('is on shift by their own schedule, else their location’s hours, in the location’s zone; available unless away or inactive', async () => {
    const t = await createTenant();
    const b = t.business.id;
    await db.execute(sql`update businesses set settings = settings || '{"assignment_capacity": 4}' where id = ${b}`);
    const tokyo = await createLocation(b, { name: 'Tokyo', timezone: 'Asia/Tokyo' });
    await setOpeningHours(b, tokyo.id, nineToFive);
    await createStaff(b, { name: 'By hours', locationId: tokyo.id });
    const ownSchedule = await createStaff(b, { name: 'Own schedule', locationId: tokyo.id, capacity: 2 });
    await db
      .update(staff)
      .set({ schedule: { ...nineToFive, weekly: { ...nineToFive.weekly, monday: [{ start: 1320, end: 1560 }] } } })
      .where(sql`id = ${ownSchedule.id}`);
    await createStaff(b, { name: 'Gone', locationId: tokyo.id, active: false });

    // Monday 2026-11-30 23:30 in Tokyo (14:30 UTC): the location is closed, the night shift is on.
    const at = new Date('2026-11-30T14:30:00Z');
    const states = Object.fromEntries((await staffAvailability(b, at)).map((s) => [s.name, s]));
    expect(Object.keys(states).sort()).toEqual(['By hours', 'Own schedule', t.owner.name].sort());
    expect(states['By hours']).toMatchObject({ onShift: false, available: false, ownSchedule: false, capacity: 4 });
    expect(states['Own schedule']).toMatchObject({ onShift: true, available: true, ownSchedule: true, capacity: 2 });
    // No location, no business hours: always on shift, and the default capacity when the business sets none.
    expect(states[t.owner.name]).toMatchObject({ onShift: true, available: true });
    expect(DEFAULT_CAPACITY).toBe(10);

    await setStaffAway(b, ownSchedule.id, true, { type: 'staff', staff_id: ownSchedule.id });
    const after = (await staffAvailability(b, at)).find((s) => s.staffId === ownSchedule.id)!;
    expect(after).toMatchObject({ onShift: true, away: true, available: false });
  });

  it('logs one event per change, none for setting what is set, and refuses staff of another business', async () => {
    const t = await createTenant();
    const other = await createTenant();
    const b = t.business.id;
    const actor = { type: 'staff' as const, staff_id: t.owner.id };
    const first = await setStaffAway(b, t.owner.id, true, actor);
    expect(first.away).toBe(true);
    expect(first.changedAt).toBeInstanceOf(Date);
    expect((await setStaffAway(b, t.owner.id, true, actor)).changedAt).toEqual(first.changedAt);
    await setStaffAway(b, t.owner.id, false, actor);
    const events = await db.execute<{ data: { staff_id: number; away: boolean }; actor_type: string }>(
      sql`select data, actor_type from events where business_id = ${b} and type = 'staff.availability_changed' order by id`,
    );
    expect(events.map((e) => e.data)).toEqual([
      { staff_id: t.owner.id, away: true },
      { staff_id: t.owner.id, away: false },
    ]);
    await expect(setStaffAway(b, other.owner.id, true, actor)).rejects.toMatchObject({ code: 'not_found' });
  });
});
