import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { businesses } from '@/db/schema';
import { PLATFORM_KEY } from '@/server/testing/factories';
import { api, jsonOf } from '@/server/testing/http';

/** The after-hours answer's settings over REST (docs/api.md#after-hours-answer); the inbox's are in server/trpc/after-hours-router.test.ts. */

const onboard = (body: unknown) => api.post('/api/v1/business/onboard', { headers: { 'x-api-key': PLATFORM_KEY() }, body });
const settingsOf = async (id: number) => (await db.select().from(businesses).where(eq(businesses.id, id)))[0]!.settings;

describe('after-hours answer settings over REST (onboarding)', () => {
  it('stores the business answer, its locale and a location’s own; refuses unknown variables and locales with their loc', async () => {
    const ext = `biz-${randomUUID().slice(0, 8)}`;
    const base = { external_id: ext, name: 'After Six', timezone: 'America/New_York' };
    const res = await onboard({
      ...base,
      settings: { after_hours_reply: '  {business_name}: back {next_opening}.  ', locale: 'en-gb' },
      locations: [
        { external_id: 'north', name: 'North', after_hours_reply: '{location_name} opens {next_opening}.' },
        { external_id: 'south', name: 'South' },
      ],
    });
    expect(res.status).toBe(200);
    const id = (await jsonOf(res)).business_id as number;
    expect(await settingsOf(id)).toEqual({ after_hours_reply: '{business_name}: back {next_opening}.', locale: 'en-GB' });
    const listed = await api.get(`/api/v1/businesses/${id}/locations`, { headers: { 'x-api-key': PLATFORM_KEY() } });
    expect(
      ((await jsonOf(listed)) as unknown as { name: string; after_hours_reply: string | null }[]).map((l) => [
        l.name,
        l.after_hours_reply,
      ]),
    ).toEqual([
      ['North', '{location_name} opens {next_opening}.'],
      ['South', null],
    ]);

    const refused = async (body: unknown, loc: (string | number)[], words: string) => {
      const r = await onboard(body);
      expect(r.status).toBe(422);
      const detail = (await jsonOf(r)).detail as { loc: unknown[]; msg: string }[];
      expect(detail).toContainEqual(expect.objectContaining({ loc, msg: expect.stringContaining(words) }));
    };
    await refused(
      { ...base, settings: { after_hours_reply: 'Hi {first_name}!' } },
      ['body', 'settings', 'after_hours_reply'],
      '{first_name} is not a variable',
    );
    await refused(
      { ...base, settings: { after_hours_reply: 'a'.repeat(1601) } },
      ['body', 'settings', 'after_hours_reply'],
      '1600',
    );
    await refused({ ...base, settings: { locale: 'not a locale' } }, ['body', 'settings', 'locale'], 'BCP 47');
    await refused(
      { ...base, locations: [{ external_id: 'north', name: 'North', after_hours_reply: '{opening}' }] },
      ['body', 'locations', 0, 'after_hours_reply'],
      'not a variable',
    );
    // Blank is off; omitted keeps what is stored.
    expect((await onboard({ ...base, settings: { after_hours_reply: '  ' } })).status).toBe(200);
    expect(await settingsOf(id)).toEqual({ after_hours_reply: null, locale: 'en-GB' });
  });
});
