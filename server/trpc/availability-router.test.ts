import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { issueSession } from '@/server/services/auth';
import { createStaff, createTenant } from '@/server/testing/factories';
import { createContext } from './init';
import { createCaller } from './root';

async function callerFor(businessId: number, staffId: number) {
  const { token } = await issueSession({ kind: 'platform', scope: 'test' }, { business_id: businessId, staff_id: staffId });
  const req = new Request('http://localhost:3000/api/trpc/x', {
    method: 'POST',
    headers: { host: 'localhost:3000', cookie: `session=${token}`, origin: 'http://localhost:3000' },
  });
  return createCaller(await createContext({ req }));
}

describe('availability in the inbox (tRPC)', () => {
  it('the Away switch is the signed-in staff member’s, logged as them, and shows in everyone’s list', async () => {
    const t = await createTenant();
    const member = await createStaff(t.business.id, { name: 'Member' });
    const mine = await callerFor(t.business.id, member.id);
    expect(await mine.inbox.setAway({ away: true })).toMatchObject({ staff_id: member.id, away: true, available: false });
    const list = await (await callerFor(t.business.id, t.owner.id)).inbox.availability();
    expect(list.staff.find((s) => s.staff_id === member.id)).toMatchObject({ away: true, on_shift: true });
    const [event] = await db.execute<{ actor_type: string; actor_staff_id: number }>(
      sql`select actor_type, actor_staff_id from events where business_id = ${t.business.id} and type = 'staff.availability_changed'`,
    );
    expect(event).toEqual({ actor_type: 'staff', actor_staff_id: member.id });
  });

  it('schedules: one’s own, a colleague’s with a manager role, refused with REST’s issues; capacities for managers', async () => {
    const t = await createTenant();
    const other = await createTenant();
    const member = await createStaff(t.business.id, { name: 'Member' });
    const plain = await callerFor(t.business.id, member.id);
    const owner = await callerFor(t.business.id, t.owner.id);
    const night = { weekly: { friday: [{ start: '22:00', end: '02:00' }] } };

    expect((await plain.inbox.setStaffSchedule({ staffId: member.id, hours: night })).source).toBe('own');
    const schedules = await owner.inbox.staffSchedules();
    expect(schedules.find((s) => s.staff_id === member.id)).toMatchObject({
      name: 'Member',
      source: 'own',
      weekly: { friday: [{ start: '22:00', end: '02:00', overnight: true }] },
    });
    expect(schedules.find((s) => s.staff_id === t.owner.id)).toMatchObject({ source: 'default' });

    await expect(plain.inbox.setStaffSchedule({ staffId: t.owner.id, hours: night })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(plain.inbox.setStaffCapacity({ staffId: member.id, capacity: 3 })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(owner.inbox.setStaffSchedule({ staffId: other.owner.id, hours: null })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(
      owner.inbox.setStaffSchedule({ staffId: member.id, hours: { weekly: { monday: [{ start: '25:00', end: '26:00' }] } } }),
    ).rejects.toMatchObject({
      code: 'UNPROCESSABLE_CONTENT',
      cause: {
        extra: { issues: expect.arrayContaining([expect.objectContaining({ loc: ['body', 'weekly', 'monday', 0, 'start'] })]) },
      },
    });
    await expect(owner.inbox.setStaffCapacity({ staffId: member.id, capacity: 1001 })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });

    expect((await owner.inbox.setStaffSchedule({ staffId: member.id, hours: null })).source).toBe('default');
    expect(await owner.inbox.setStaffCapacity({ staffId: member.id, capacity: 3 })).toMatchObject({
      capacity: 3,
      capacity_source: 'own',
    });
  });
});
