import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { businesses, staff } from '@/db/schema';
import { issueSession } from '@/server/services/auth';
import { followBusiness } from '@/server/testing/business-events';
import { createClient, createConversation, createLocation, createStaff, createTenant } from '@/server/testing/factories';
import { api, deleteJson, getJson, jsonOf, locs, putJson, restTenant, type RestTenant } from '@/server/testing/http';
import { QUEUES } from '@/server/jobs/queues';
import { jobsWhere } from '@/server/testing/webhooks';
import { setAvailability, setStaffSchedule } from './staff-schedules';

/**
 * Staff schedules and availability over REST (docs/api.md#staff-availability): whose hours a staff
 * member works and the clock's reading (a night shift across both DST changes), the Away switch
 * with its event's actor, capacities, waiting counts, who may change what, 422s naming the field
 * and tenancy.
 */

let t: RestTenant;
let paris: { id: number };
beforeAll(async () => {
  t = await restTenant();
  await db.update(businesses).set({ timezone: 'America/New_York' }).where(eq(businesses.id, t.business.id));
  paris = await createLocation(t.business.id, { name: 'Paris', timezone: 'Europe/Paris' });
});

const sessionFor = async (businessId: number, staffId: number) => ({
  authorization: `Bearer ${(await issueSession({ kind: 'platform', scope: 'test' }, { business_id: businessId, staff_id: staffId })).token}`,
});
const scheduleAt = async (staffId: number, at: string) =>
  (await getJson(`${t.base}/staffs/${staffId}/schedule?at=${encodeURIComponent(at)}`, t.key)).body.status;

/** Saturday night into Sunday morning, 22:00–06:00. */
const NIGHT_SHIFT = { weekly: { saturday: [{ start: '22:00', end: '06:00' }] } };

describe('a staff member’s schedule', () => {
  it('follows their location’s opening hours (in its zone) until they have their own; DELETE goes back', async () => {
    const member = await createStaff(t.business.id, { locationId: paris.id });
    const path = `${t.base}/staffs/${member.id}/schedule`;
    const before = await getJson(path, t.key);
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({
      staff_id: member.id,
      business_id: t.business.id,
      location_id: paris.id,
      source: 'default',
      time_zone: 'Europe/Paris',
      status: { on_shift: true, next_shift_start: null, next_shift_end: null },
    });

    await putJson(`${t.base}/locations/${paris.id}/opening-hours`, t.key, {
      weekly: { monday: [{ start: '09:00', end: '17:00' }] },
    });
    expect((await getJson(path, t.key)).body).toMatchObject({
      source: 'location',
      weekly: { monday: [{ start: '09:00', end: '17:00', overnight: false }], tuesday: [] },
    });
    // Monday 2026-11-30 10:00 in Paris (09:00 UTC): on shift until 17:00 Paris.
    expect(await scheduleAt(member.id, '2026-11-30T09:00:00Z')).toEqual({
      at: '2026-11-30T09:00:00.000Z',
      on_shift: true,
      next_shift_start: '2026-12-07T08:00:00.000Z',
      next_shift_end: '2026-11-30T16:00:00.000Z',
    });

    const own = await putJson(path, t.key, NIGHT_SHIFT);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ source: 'own', time_zone: 'Europe/Paris' });
    expect(own.body.weekly.saturday).toEqual([{ start: '22:00', end: '06:00', overnight: true }]);
    expect(own.body.weekly.monday).toEqual([]);

    // An empty week is a schedule of their own with no shifts, not the location's hours.
    const none = await putJson(path, t.key, { weekly: {} });
    expect(none.body).toMatchObject({ source: 'own', status: { on_shift: false, next_shift_start: null } });

    const back = await deleteJson(path, t.key);
    expect(back.status).toBe(200);
    expect(back.body.source).toBe('location');
    const [row] = await db.select({ schedule: staff.schedule }).from(staff).where(eq(staff.id, member.id));
    expect(row!.schedule).toBeNull();
  });

  it('without a location, works the business’s hours in the business’s zone', async () => {
    const member = await createStaff(t.business.id);
    const res = await getJson(`${t.base}/staffs/${member.id}/schedule`, t.key);
    expect(res.body).toMatchObject({ location_id: null, source: 'default', time_zone: 'America/New_York' });
  });

  it('a night shift crossing midnight is on shift through both DST changes, ending at 06:00 local', async () => {
    const member = await createStaff(t.business.id);
    expect((await putJson(`${t.base}/staffs/${member.id}/schedule`, t.key, NIGHT_SHIFT)).status).toBe(200);

    // Clocks go back on Sunday 2026-11-01 (02:00 EDT → 01:00 EST): the shift lasts nine hours.
    expect(await scheduleAt(member.id, '2026-11-01T01:59:00Z')).toMatchObject({ on_shift: false }); // 21:59 EDT
    expect(await scheduleAt(member.id, '2026-11-01T02:00:00Z')).toMatchObject({
      on_shift: true, // 22:00 EDT
      next_shift_end: '2026-11-01T11:00:00.000Z', // 06:00 EST
    });
    expect((await scheduleAt(member.id, '2026-11-01T05:30:00Z')).on_shift).toBe(true); // the first 01:30
    expect((await scheduleAt(member.id, '2026-11-01T06:30:00Z')).on_shift).toBe(true); // the second 01:30
    expect((await scheduleAt(member.id, '2026-11-01T10:59:00Z')).on_shift).toBe(true); // 05:59 EST
    expect(await scheduleAt(member.id, '2026-11-01T11:00:00Z')).toMatchObject({
      on_shift: false,
      next_shift_start: '2026-11-08T03:00:00.000Z', // the next Saturday, 22:00 EST
    });

    // Clocks go forward on Sunday 2026-03-08 (02:00 EST → 03:00 EDT): the shift lasts seven hours.
    expect(await scheduleAt(member.id, '2026-03-08T03:00:00Z')).toMatchObject({
      on_shift: true, // Saturday 22:00 EST
      next_shift_end: '2026-03-08T10:00:00.000Z', // 06:00 EDT
    });
    expect((await scheduleAt(member.id, '2026-03-08T09:59:00Z')).on_shift).toBe(true);
    expect((await scheduleAt(member.id, '2026-03-08T10:00:00Z')).on_shift).toBe(false);
  });

  it('refuses a schedule opening hours would refuse, naming the field', async () => {
    const path = `${t.base}/staffs/${t.owner.id}/schedule`;
    const cases: [unknown, (string | number)[][]][] = [
      [
        { weekly: { monday: [{ start: '25:00', end: '26:00' }] } },
        [
          ['body', 'weekly', 'monday', 0, 'start'],
          ['body', 'weekly', 'monday', 0, 'end'],
        ],
      ],
      [{ weekly: { tuesday: [{ start: '09:00', end: '09:00' }] } }, [['body', 'weekly', 'tuesday', 0, 'end']]],
      [
        { weekly: { monday: [{ start: '22:00', end: '06:00' }], tuesday: [{ start: '05:00', end: '12:00' }] } },
        [['body', 'weekly', 'tuesday', 0]],
      ],
      [
        { weekly: { sunday: [{ start: '20:00', end: '02:00' }], monday: [{ start: '01:00', end: '03:00' }] } },
        [['body', 'weekly', 'monday', 0]],
      ],
      [{ exceptions: [] }, [['body', 'weekly']]],
    ];
    for (const [body, expected] of cases) {
      const res = await putJson(path, t.key, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(locs(res.body)).toEqual(expected);
    }
    const overlap = await putJson(path, t.key, cases[2]![0]);
    expect(overlap.body.detail[0].msg).toBe('overlaps Monday 22:00–06:00');
    const badAt = await api.get(`${path}?at=2026-02-30T10:00:00Z`, { headers: t.key });
    expect(badAt.status).toBe(422);
    expect(locs(await jsonOf(badAt))).toEqual([['query', 'at']]);
    expect((await getJson(path, t.key)).body.source).not.toBe('own');
  });
});

describe('availability', () => {
  it('lists each active staff member’s state at `at`, with capacities and waiting counts', async () => {
    const b = await createTenant();
    const base = `/api/v1/businesses/${b.business.id}`;
    const key = { 'x-api-key': b.apiKey };
    await db
      .update(businesses)
      .set({ timezone: 'America/New_York', settings: sql`settings || '{"assignment_capacity": 4}'` })
      .where(eq(businesses.id, b.business.id));
    const night = await createStaff(b.business.id, { name: 'Night', capacity: 2 });
    await putJson(`${base}/staffs/${night.id}/schedule`, key, NIGHT_SHIFT);
    const away = await createStaff(b.business.id, { name: 'Away' });
    await createStaff(b.business.id, { name: 'Gone', active: false });
    expect((await putJson(`${base}/staffs/${away.id}/availability`, key, { away: true })).status).toBe(200);

    // Two conversations wait for Night's reply; a resolved one and one answered do not.
    const since = new Date('2026-01-01T00:00:00Z');
    for (const overrides of [
      { waitingSince: since },
      { waitingSince: since },
      { waitingSince: since, status: 'resolved' as const },
      { waitingSince: null },
    ])
      await createConversation(b.business.id, (await createClient(b.business.id)).id, {
        assignedStaffId: night.id,
        ...overrides,
      });

    const at = '2026-11-01T05:30:00Z'; // Sunday 01:30 EDT: within Saturday's night shift
    const res = await getJson(`${base}/availability?at=${at}`, key);
    expect(res.status).toBe(200);
    expect(res.body.at).toBe('2026-11-01T05:30:00.000Z');
    const byName = Object.fromEntries((res.body.staff as { name: string }[]).map((s) => [s.name, s]));
    expect(Object.keys(byName).sort()).toEqual(['Away', 'Night', b.owner.name].sort());
    expect(byName.Night).toEqual({
      staff_id: night.id,
      name: 'Night',
      location_id: null,
      away: false,
      away_changed_at: null,
      on_shift: true,
      available: true,
      schedule_source: 'own',
      next_shift_change: '2026-11-01T11:00:00.000Z',
      capacity: 2,
      capacity_source: 'own',
      waiting: 2,
    });
    expect(byName.Away).toMatchObject({
      away: true,
      away_changed_at: expect.any(String),
      on_shift: true,
      available: false,
      schedule_source: 'default',
      next_shift_change: null,
      capacity: 4,
      capacity_source: 'business',
      waiting: 0,
    });

    // Off shift on a Monday afternoon; GET schedule reads the same clock.
    const monday = '2026-11-02T18:00:00Z';
    const later = (await getJson(`${base}/availability?at=${monday}`, key)).body.staff.find(
      (s: { staff_id: number }) => s.staff_id === night.id,
    );
    expect(later).toMatchObject({ on_shift: false, available: false, next_shift_change: '2026-11-08T03:00:00.000Z' });
    const schedule = (await getJson(`${base}/staffs/${night.id}/schedule?at=${monday}`, key)).body.status;
    expect(schedule).toMatchObject({ on_shift: false, next_shift_start: later.next_shift_change });
  });

  it('the Away switch logs its event as the session’s staff member, or as the API; setting what is set logs nothing', async () => {
    const b = await createTenant();
    const base = `/api/v1/businesses/${b.business.id}`;
    const member = await createStaff(b.business.id);
    const own = await sessionFor(b.business.id, member.id);
    const mine = await putJson(`${base}/staffs/${member.id}/availability`, own, { away: true });
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ staff_id: member.id, away: true, available: false });
    expect((await putJson(`${base}/staffs/${member.id}/availability`, own, { away: true })).status).toBe(200);
    expect((await putJson(`${base}/staffs/${member.id}/availability`, { 'x-api-key': b.apiKey }, { away: false })).status).toBe(
      200,
    );
    const events = await db.execute<{ data: unknown; actor_type: string; actor_staff_id: number | null }>(
      sql`select data, actor_type, actor_staff_id from events
          where business_id = ${b.business.id} and type = 'staff.availability_changed' order by id`,
    );
    expect([...events]).toEqual([
      { data: { staff_id: member.id, away: true }, actor_type: 'staff', actor_staff_id: member.id },
      { data: { staff_id: member.id, away: false }, actor_type: 'api', actor_staff_id: null },
    ]);
  });

  it('reaches the inbox’s live stream as a `staff.updated` frame', async () => {
    const b = await createTenant();
    const stream = followBusiness(b.business.id, b.business.id);
    try {
      expect(await stream.joined).toBe(true);
      await putJson(
        `/api/v1/businesses/${b.business.id}/staffs/${b.owner.id}/availability`,
        { 'x-api-key': b.apiKey },
        { away: true },
      );
      expect(await stream.next()).toMatchObject({ type: 'staff.updated', businessId: b.business.id, conversationIds: [] });
    } finally {
      stream.stop();
    }
  });

  it('a session sets its own Away and schedule; a colleague’s, and capacities, take an owner or manager', async () => {
    const b = await createTenant();
    const base = `/api/v1/businesses/${b.business.id}`;
    const member = await createStaff(b.business.id);
    const colleague = await createStaff(b.business.id);
    const manager = await createStaff(b.business.id, { role: 'manager' });
    const plain = await sessionFor(b.business.id, member.id);
    const boss = await sessionFor(b.business.id, manager.id);

    expect((await putJson(`${base}/staffs/${member.id}/schedule`, plain, NIGHT_SHIFT)).status).toBe(200);
    expect((await putJson(`${base}/staffs/${colleague.id}/schedule`, plain, NIGHT_SHIFT)).status).toBe(403);
    expect((await deleteJson(`${base}/staffs/${colleague.id}/schedule`, plain)).status).toBe(403);
    expect((await putJson(`${base}/staffs/${colleague.id}/availability`, plain, { away: true })).status).toBe(403);
    expect((await putJson(`${base}/staffs/${member.id}/availability`, plain, { capacity: 50 })).status).toBe(403);

    expect((await putJson(`${base}/staffs/${colleague.id}/availability`, boss, { away: true })).status).toBe(200);
    const set = await putJson(`${base}/staffs/${member.id}/availability`, boss, { capacity: 0 });
    expect(set.body).toMatchObject({ capacity: 0, capacity_source: 'own', away: false });
    const cleared = await putJson(`${base}/staffs/${member.id}/availability`, boss, { capacity: null });
    expect(cleared.body).toMatchObject({ capacity: 10, capacity_source: 'business' });
    expect((await deleteJson(`${base}/staffs/${member.id}/schedule`, boss)).status).toBe(200);
    // Reading is for everyone.
    expect((await getJson(`${base}/staffs/${colleague.id}/schedule`, plain)).status).toBe(200);
    expect((await getJson(`${base}/availability`, plain)).status).toBe(200);
  });

  it('refuses bad bodies with the field, never 500', async () => {
    const path = `${t.base}/staffs/${t.owner.id}/availability`;
    const cases: [unknown, (string | number)[][]][] = [
      [{}, [['body']]],
      [{ capacity: 1001 }, [['body', 'capacity']]],
      [{ capacity: -1 }, [['body', 'capacity']]],
      [{ capacity: 2.5 }, [['body', 'capacity']]],
      [{ away: 'yes' }, [['body', 'away']]],
      [{ away: true, Away: false }, [['body']]],
    ];
    for (const [body, expected] of cases) {
      const res = await putJson(path, t.key, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(locs(res.body)).toEqual(expected);
    }
    const badAt = await api.get(`${t.base}/availability?at=tomorrow`, { headers: t.key });
    expect(badAt.status).toBe(422);
    expect(locs(await jsonOf(badAt))).toEqual([['query', 'at']]);
  });

  it('another business’s staff member, an unknown or an inactive one is a 404 on every path', async () => {
    const other = await createTenant();
    const theirs = other.owner.id;
    const gone = await createStaff(t.business.id, { active: false });
    for (const headers of [t.key, t.session]) {
      expect((await getJson(`${t.base}/staffs/${theirs}/schedule`, headers)).status).toBe(404);
      expect((await putJson(`${t.base}/staffs/${theirs}/schedule`, headers, NIGHT_SHIFT)).status).toBe(404);
      expect((await deleteJson(`${t.base}/staffs/${theirs}/schedule`, headers)).status).toBe(404);
      expect((await putJson(`${t.base}/staffs/${theirs}/availability`, headers, { away: true })).status).toBe(404);
      expect((await putJson(`${t.base}/staffs/${gone.id}/availability`, headers, { away: true })).status).toBe(404);
      expect((await getJson(`${t.base}/staffs/2147483000/schedule`, headers)).status).toBe(404);
    }
    const foreign = await getJson(`/api/v1/businesses/${other.business.id}/availability`, t.key);
    expect([403, 404]).toContain(foreign.status);
    const [row] = await db.select({ away: staff.away, schedule: staff.schedule }).from(staff).where(eq(staff.id, theirs));
    expect(row).toEqual({ away: false, schedule: null });
  });
});

describe('the contract in the OpenAPI document', () => {
  it('states the capacity’s bounds and reuses the opening hours’ schedule', async () => {
    const doc = await jsonOf(await api.get('/api/v1/openapi.json'));
    const capacity = doc.components.schemas.SetAvailabilityRequest.properties.capacity;
    expect(JSON.stringify(capacity)).toContain('"minimum":0');
    expect(JSON.stringify(capacity)).toContain('"maximum":1000');
    expect(doc.components.schemas.SetAvailabilityRequest.additionalProperties).toBe(false);
    const schedule = doc.paths['/businesses/{business_id}/staffs/{staff_id}/schedule'];
    expect(Object.keys(schedule).sort()).toEqual(['delete', 'get', 'put']);
    expect(schedule.put.requestBody.content['application/json'].schema.$ref).toContain('OpeningHoursInput');
    expect(Object.keys(schedule.put.responses)).toEqual(expect.arrayContaining(['200', '403', '404', '422']));
    expect(doc.paths['/businesses/{business_id}/availability'].get).toBeDefined();
    expect(doc.paths['/businesses/{business_id}/staffs/{staff_id}/availability'].put).toBeDefined();
  });
});

describe('changes that give a staff member room or a shift', () => {
  it('a capacity or a schedule set asks auto-assignment to look again at once', async () => {
    const t = await createTenant();
    const sweeps = async () => (await jobsWhere(QUEUES.assignmentSweep, 'businessId', t.business.id)).length;
    expect(await sweeps()).toBe(0);
    await setAvailability(t.business.id, t.owner.id, { away: true }, { type: 'api' });
    expect(await sweeps()).toBe(0); // Away is heard from the event log, not here
    await setAvailability(t.business.id, t.owner.id, { capacity: 12 }, { type: 'api' });
    expect(await sweeps()).toBe(1);
    await db.execute(sql`update pgboss.job set state = 'completed' where name = ${QUEUES.assignmentSweep}`);
    await setStaffSchedule(t.business.id, t.owner.id, null);
    expect(await sweeps()).toBe(2);
  });
});
