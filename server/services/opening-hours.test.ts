import { and, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { businesses, openingHours } from '@/db/schema';
import { createLocation, createTenant, PLATFORM_KEY } from '@/server/testing/factories';
import { api, deleteJson, getJson, jsonOf, locs, postJson, putJson, restTenant, type RestTenant } from '@/server/testing/http';
import { openingClock } from '@/server/shared/opening-hours';
import { businessOpeningHours, openingHoursOf } from './opening-hours';

/**
 * Opening hours over REST (docs/api.md#opening-hours): stored, read back and answered by the clock
 * (`status`, at any instant with `?at=`), per location with the business's as the fallback, the
 * 422s naming their field, and tenancy. The clock's own rules are tested in
 * server/shared/opening-hours.test.ts.
 */

let t: RestTenant;
beforeAll(async () => {
  t = await restTenant();
  await db.update(businesses).set({ timezone: 'America/New_York' }).where(eq(businesses.id, t.business.id));
});

const nineToFive = [{ start: '09:00', end: '17:00' }];
/** Weekdays 09:00–17:00, Friday also 22:00–02:00; closed on Christmas (a Friday). */
const SALON = {
  weekly: {
    monday: nineToFive,
    tuesday: nineToFive,
    wednesday: nineToFive,
    thursday: nineToFive,
    // Given out of order: answered by start.
    friday: [
      { start: '22:00', end: '02:00' },
      { start: '09:00', end: '17:00' },
    ],
  },
  exceptions: [
    { date: '2026-12-31', name: "New Year's Eve", intervals: [{ start: '20:00', end: '03:00' }] },
    { date: '2026-12-25', name: 'Christmas Day' },
  ],
};

const statusAt = async (path: string, at: string) => (await getJson(`${path}?at=${encodeURIComponent(at)}`, t.key)).body.status;

describe('the business’s opening hours', () => {
  it('are open around the clock until set', async () => {
    const res = await getJson(`${t.base}/opening-hours`, t.key);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      business_id: t.business.id,
      location_id: null,
      source: 'default',
      time_zone: 'America/New_York',
    });
    expect(res.body.weekly.sunday).toEqual([{ start: '00:00', end: '24:00', overnight: false }]);
    expect(res.body.status).toMatchObject({ open: true, next_opening: null, next_closing: null });
  });

  it('stores an overnight interval and a holiday, and answers isOpen / nextOpening through the API', async () => {
    const put = await putJson(`${t.base}/opening-hours`, t.key, SALON);
    expect(put.status).toBe(200);
    expect(put.body.source).toBe('business');
    expect(put.body.weekly.friday).toEqual([
      { start: '09:00', end: '17:00', overnight: false },
      { start: '22:00', end: '02:00', overnight: true },
    ]);
    expect(put.body.weekly.saturday).toEqual([]);
    expect(put.body.exceptions).toEqual([
      { date: '2026-12-25', name: 'Christmas Day', intervals: [] },
      { date: '2026-12-31', name: "New Year's Eve", intervals: [{ start: '20:00', end: '03:00', overnight: true }] },
    ]);
    expect((await getJson(`${t.base}/opening-hours`, t.key)).body.weekly).toEqual(put.body.weekly);

    const path = `${t.base}/opening-hours`;
    // Saturday 19 December, 01:00 EST: Friday night's interval is still open, until 02:00 EST.
    expect(await statusAt(path, '2026-12-19T06:00:00Z')).toEqual({
      at: '2026-12-19T06:00:00.000Z',
      open: true,
      next_opening: '2026-12-21T14:00:00.000Z',
      next_closing: '2026-12-19T07:00:00.000Z',
    });
    // Christmas: closed all day, its night too; next open Monday 28th 09:00 EST.
    expect(await statusAt(path, '2026-12-25T16:00:00-05:00')).toMatchObject({
      open: false,
      next_opening: '2026-12-28T14:00:00.000Z',
    });
    expect(await statusAt(path, '2026-12-26T01:00:00-05:00')).toMatchObject({ open: false });
    // New Year's Eve: 20:00 EST to 03:00 EST.
    expect(await statusAt(path, '2026-12-31T10:00:00-05:00')).toMatchObject({
      open: false,
      next_opening: '2027-01-01T01:00:00.000Z',
    });
  });

  it('the same body twice changes nothing; the rows stay one per owner', async () => {
    await putJson(`${t.base}/opening-hours`, t.key, SALON);
    const [before] = await db.select().from(openingHours).where(eq(openingHours.businessId, t.business.id));
    await putJson(`${t.base}/opening-hours`, t.key, SALON);
    const rows = await db.select().from(openingHours).where(eq(openingHours.businessId, t.business.id));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.updatedAt).toEqual(before!.updatedAt);
  });
});

describe('a location’s opening hours', () => {
  it('keep to the business’s in the location’s own time zone, until it has its own; DELETE goes back', async () => {
    await putJson(`${t.base}/opening-hours`, t.key, SALON);
    const berlin = await createLocation(t.business.id, { name: 'Berlin', timezone: 'Europe/Berlin' });
    const path = `${t.base}/locations/${berlin.id}/opening-hours`;

    const inherited = await getJson(path, t.key);
    expect(inherited.status).toBe(200);
    expect(inherited.body).toMatchObject({ location_id: berlin.id, source: 'business', time_zone: 'Europe/Berlin' });
    // Monday 21 December 09:00 in Berlin (CET) is 08:00Z.
    expect((await statusAt(path, '2026-12-21T07:00:00Z')).next_opening).toBe('2026-12-21T08:00:00.000Z');

    const own = await putJson(path, t.key, { weekly: { saturday: [{ start: '10:00', end: '14:00' }] } });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ source: 'location', exceptions: [] });
    expect((await statusAt(path, '2026-12-21T07:00:00Z')).next_opening).toBe('2026-12-26T09:00:00.000Z');
    // The business's hours are untouched.
    expect((await getJson(`${t.base}/opening-hours`, t.key)).body.source).toBe('business');

    // What other features read: the same hours, per location or for all at once.
    const applied = await openingHoursOf(t.business.id, berlin.id);
    expect(applied).toMatchObject({ source: 'location', timeZone: 'Europe/Berlin' });
    expect(openingClock(applied).isOpen(new Date('2026-12-26T10:00:00Z'))).toBe(true);
    const all = await businessOpeningHours(t.business.id);
    expect(all.forLocation(berlin.id).source).toBe('location');
    expect(all.forLocation(null)).toMatchObject({ source: 'business', timeZone: 'America/New_York' });

    const cleared = await deleteJson(path, t.key);
    expect(cleared.status).toBe(200);
    expect(cleared.body.source).toBe('business');
    const rows = await db
      .select()
      .from(openingHours)
      .where(and(eq(openingHours.businessId, t.business.id), eq(openingHours.locationId, berlin.id)));
    expect(rows).toEqual([]);
  });

  it('another business’s location, or an unknown one, is a 404; another business’s hours are refused', async () => {
    const other = await createTenant();
    const theirs = await createLocation(other.business.id, { name: 'Theirs' });
    const body = { weekly: { monday: nineToFive } };
    expect((await getJson(`${t.base}/locations/${theirs.id}/opening-hours`, t.key)).status).toBe(404);
    expect((await putJson(`${t.base}/locations/${theirs.id}/opening-hours`, t.key, body)).status).toBe(404);
    expect((await deleteJson(`${t.base}/locations/${theirs.id}/opening-hours`, t.key)).status).toBe(404);
    expect((await getJson(`${t.base}/locations/2147483000/opening-hours`, t.key)).status).toBe(404);
    const foreign = await putJson(`/api/v1/businesses/${other.business.id}/opening-hours`, t.key, body);
    expect([403, 404]).toContain(foreign.status);
    expect(await db.select().from(openingHours).where(eq(openingHours.businessId, other.business.id))).toEqual([]);
  });
});

describe('422s name the field', () => {
  const put = (body: unknown) => putJson(`${t.base}/opening-hours`, t.key, body);
  const week = (days: Record<string, unknown>) => ({ weekly: days });

  it.each([
    [
      '25:00',
      week({ monday: [{ start: '25:00', end: '26:00' }] }),
      [
        ['body', 'weekly', 'monday', 0, 'start'],
        ['body', 'weekly', 'monday', 0, 'end'],
      ],
    ],
    ['a start of 24:00', week({ monday: [{ start: '24:00', end: '02:00' }] }), [['body', 'weekly', 'monday', 0, 'start']]],
    ['end = start', week({ tuesday: [{ start: '09:00', end: '09:00' }] }), [['body', 'weekly', 'tuesday', 0, 'end']]],
    ['9:00 without its zero', week({ monday: [{ start: '9:00', end: '17:00' }] }), [['body', 'weekly', 'monday', 0, 'start']]],
    [
      'overlapping intervals',
      week({ monday: [nineToFive[0], { start: '16:00', end: '18:00' }] }),
      [['body', 'weekly', 'monday', 1]],
    ],
    [
      'an overnight interval over the next morning',
      week({ monday: [{ start: '22:00', end: '06:00' }], tuesday: [{ start: '05:00', end: '12:00' }] }),
      [['body', 'weekly', 'tuesday', 0]],
    ],
    ['a misspelt day', week({ mon: nineToFive }), [['body', 'weekly']]],
    [
      '13 intervals in a day',
      week({ monday: Array.from({ length: 13 }, (_, i) => ({ start: `0${i % 10}:00`, end: '23:00' })) }),
      [['body', 'weekly', 'monday']],
    ],
    ['no weekly schedule', { exceptions: [] }, [['body', 'weekly']]],
    [
      'a date listed twice',
      { weekly: {}, exceptions: [{ date: '2026-12-25' }, { date: '2026-12-25', intervals: [] }] },
      [['body', 'exceptions', 1, 'date']],
    ],
    ['30 February', { weekly: {}, exceptions: [{ date: '2026-02-30' }] }, [['body', 'exceptions', 0, 'date']]],
    ['a date out of range', { weekly: {}, exceptions: [{ date: '2400-01-01' }] }, [['body', 'exceptions', 0, 'date']]],
    [
      'a holiday overlapping the night before',
      {
        weekly: { friday: [{ start: '22:00', end: '02:00' }] },
        exceptions: [{ date: '2026-12-19', intervals: [{ start: '01:00', end: '03:00' }] }],
      },
      [['body', 'exceptions', 0, 'intervals', 0]],
    ],
  ])('%s', async (_, body, expected) => {
    const res = await put(body);
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual(expected);
    expect(res.body.detail[0].msg).toEqual(expect.any(String));
  });

  it('says what overlaps, in words', async () => {
    const res = await put(week({ monday: [{ start: '22:00', end: '06:00' }], tuesday: [{ start: '05:00', end: '12:00' }] }));
    expect(res.body.detail[0].msg).toBe('overlaps Monday 22:00–06:00');
  });

  it('refuses an `at` that is not a date and time on the calendar', async () => {
    const res = await api.get(`${t.base}/opening-hours?at=2026-02-30T10:00:00Z`, { headers: t.key });
    expect(res.status).toBe(422);
    expect(locs(await jsonOf(res))).toEqual([['query', 'at']]);
  });
});

describe('the contract in the OpenAPI document', () => {
  it('states the clock format, the list bounds and calendar dates', async () => {
    const doc = await jsonOf(await api.get('/api/v1/openapi.json'));
    const schemas = doc.components.schemas;
    expect(schemas.OpeningIntervalInput.properties.start).toMatchObject({
      type: 'string',
      maxLength: 5,
      pattern: expect.any(String),
    });
    expect(schemas.OpeningIntervalInput.properties.end.pattern).toContain('24:00');
    expect(schemas.WeeklyHoursInput.properties.monday.maxItems).toBe(12);
    expect(schemas.WeeklyHoursInput.additionalProperties).toBe(false);
    expect(schemas.OpeningHoursExceptionInput.properties.date).toMatchObject({ format: 'date', maxLength: 10 });
    expect(schemas.OpeningHoursInput.properties.exceptions.maxItems).toBe(366);
    const location = doc.paths['/businesses/{business_id}/locations/{location_id}/opening-hours'];
    expect(Object.keys(location).sort()).toEqual(['delete', 'get', 'put']);
    expect(Object.keys(location.put.responses)).toEqual(expect.arrayContaining(['200', '404', '422']));
  });
});

describe('onboarding', () => {
  const platform = () => ({ 'x-api-key': PLATFORM_KEY() });
  const onboard = (body: Record<string, unknown>) =>
    postJson('/api/v1/business/onboard', platform(), {
      external_id: 'hours-co',
      name: 'Hours & Co',
      timezone: 'Europe/Berlin',
      ...body,
    });

  it('sets the business’s and each location’s hours; omitted keeps them, null removes a location’s own', async () => {
    const first = await onboard({
      opening_hours: SALON,
      locations: [
        { external_id: 'mitte', name: 'Mitte', opening_hours: { weekly: { saturday: [{ start: '10:00', end: '14:00' }] } } },
        { external_id: 'kreuzberg', name: 'Kreuzberg' },
      ],
    });
    expect(first.status).toBe(200);
    const base = `/api/v1/businesses/${first.body.business_id}`;
    const [mitte, kreuzberg] = first.body.locations.map((l: { location_id: number }) => l.location_id);
    expect((await getJson(`${base}/opening-hours`, platform())).body.weekly.friday).toHaveLength(2);
    expect((await getJson(`${base}/locations/${mitte}/opening-hours`, platform())).body.source).toBe('location');
    expect((await getJson(`${base}/locations/${kreuzberg}/opening-hours`, platform())).body.source).toBe('business');

    await onboard({ locations: [{ external_id: 'mitte', name: 'Mitte' }] });
    expect((await getJson(`${base}/locations/${mitte}/opening-hours`, platform())).body.source).toBe('location');
    expect((await getJson(`${base}/opening-hours`, platform())).body.source).toBe('business');
    await onboard({ opening_hours: null, locations: [{ external_id: 'mitte', name: 'Mitte', opening_hours: null }] });
    expect((await getJson(`${base}/locations/${mitte}/opening-hours`, platform())).body.source).toBe('default');
  });

  it('refuses overlapping hours with the field, and stores nothing', async () => {
    const res = await onboard({
      external_id: 'hours-bad',
      locations: [
        { external_id: 'a', name: 'A', opening_hours: { weekly: { monday: [nineToFive[0], { start: '12:00', end: '13:00' }] } } },
      ],
    });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual([['body', 'locations', 0, 'opening_hours', 'weekly', 'monday', 1]]);
    expect(await db.select().from(businesses).where(eq(businesses.externalId, 'hours-bad'))).toEqual([]);
  });
});
