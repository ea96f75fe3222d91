import { describe, expect, it } from 'vitest';
import { createLocation, createTenant } from '@/server/testing/factories';
import { createContext } from './init';
import { createCaller } from './root';

async function callerFor(token: string) {
  const req = new Request('http://localhost:3000/api/trpc/x', {
    method: 'POST',
    headers: { host: 'localhost:3000', cookie: `session=${token}`, origin: 'http://localhost:3000' },
  });
  return createCaller(await createContext({ req }));
}

describe('opening hours in the inbox (tRPC)', () => {
  it('reads and sets the business’s and a location’s hours, refusing with REST’s issues', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const studio = await createLocation(a.business.id, { name: 'Studio', timezone: 'Australia/Sydney' });
    const theirs = await createLocation(b.business.id, { name: 'Theirs' });
    const trpc = await callerFor(a.sessionToken);

    const before = await trpc.inbox.openingHours();
    expect(before.business.source).toBe('default');
    expect(before.locations).toEqual([
      expect.objectContaining({ name: 'Studio', source: 'default', time_zone: 'Australia/Sydney' }),
    ]);

    const week = {
      weekly: { friday: [{ start: '22:00', end: '02:00' }] },
      exceptions: [{ date: '2026-12-25', name: 'Christmas' }],
    };
    const saved = await trpc.inbox.setOpeningHours({ locationId: null, hours: week });
    expect(saved.weekly.friday).toEqual([{ start: '22:00', end: '02:00', overnight: true }]);
    expect((await trpc.inbox.openingHours()).locations[0]!.source).toBe('business');

    await trpc.inbox.setOpeningHours({
      locationId: studio.id,
      hours: { weekly: { monday: [{ start: '09:00', end: '17:00' }] } },
    });
    expect((await trpc.inbox.openingHours()).locations[0]!.source).toBe('location');
    expect((await trpc.inbox.clearLocationOpeningHours({ locationId: studio.id })).source).toBe('business');

    await expect(
      trpc.inbox.setOpeningHours({
        locationId: null,
        hours: {
          weekly: {
            monday: [
              { start: '09:00', end: '12:00' },
              { start: '11:00', end: '25:00' },
            ],
          },
        },
      }),
    ).rejects.toMatchObject({
      code: 'UNPROCESSABLE_CONTENT',
      cause: {
        extra: {
          issues: [{ loc: ['body', 'weekly', 'monday', 1, 'end'], msg: 'must be a time of day, HH:MM from 00:00 to 24:00' }],
        },
      },
    });
    await expect(trpc.inbox.setOpeningHours({ locationId: theirs.id, hours: week })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(trpc.inbox.clearLocationOpeningHours({ locationId: theirs.id })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await (await callerFor(b.sessionToken)).inbox.openingHours()).business.source).toBe('default');
  });
});
