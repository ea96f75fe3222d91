import { describe, expect, it } from 'vitest';
import { storeOpeningHours } from '@/server/services/opening-hours';
import { createLocation, createTenant } from '@/server/testing/factories';
import { WEEKDAYS, type WeeklyHours } from '@/server/shared/opening-hours';
import { staffCaller } from '@/server/testing/trpc';

describe('after-hours answer settings in the inbox (tRPC)', () => {
  it('reads what the preview needs, sets the business’s and a location’s answer and the locale, within the business only', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const studio = await createLocation(a.business.id, { name: 'Studio', timezone: 'Europe/Berlin' });
    const theirs = await createLocation(b.business.id, { name: 'Theirs' });
    // Open 09:00–17:00 every day.
    await storeOpeningHours(a.business.id, [
      {
        locationId: null,
        schedule: {
          weekly: Object.fromEntries(WEEKDAYS.map((d) => [d, [{ start: 540, end: 1020 }]])) as WeeklyHours,
          exceptions: [],
        },
      },
    ]);
    const trpc = await staffCaller(a.sessionToken);
    const before = await trpc.inbox.afterHoursReply();
    expect(before).toMatchObject({
      business_name: a.business.name,
      locale: 'en-US',
      business: { text: null, time_zone: 'America/New_York' },
      locations: [{ location_id: studio.id, name: 'Studio', text: null, time_zone: 'Europe/Berlin' }],
    });
    // Whether open now or not, the opening named is a 09:00 on the location's clock.
    expect(new Date(before.locations[0]!.next_opening!).toLocaleTimeString('en-GB', { timeZone: 'Europe/Berlin' })).toBe(
      '09:00:00',
    );

    await trpc.inbox.setAfterHoursReply({ locationId: null, text: 'Closed. Back {next_opening}.' });
    await trpc.inbox.setAfterHoursReply({ locationId: studio.id, text: '' });
    await trpc.inbox.setLocale({ locale: 'DE-de' });
    expect(await trpc.inbox.afterHoursReply()).toMatchObject({
      locale: 'de-DE',
      business: { text: 'Closed. Back {next_opening}.' },
      locations: [{ text: '' }],
    });
    await expect(trpc.inbox.setAfterHoursReply({ locationId: null, text: '{nope}' })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
    await expect(trpc.inbox.setLocale({ locale: '12' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(trpc.inbox.setAfterHoursReply({ locationId: theirs.id, text: 'x' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });
});
