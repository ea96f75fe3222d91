import { describe, expect, it } from 'vitest';
import { createLocation, createStaff } from '@/server/testing/factories';
import { getJson, postJson, putJson, restTenant } from '@/server/testing/http';
import { newClientTexts, settle, sweepJobs, assigneeOf } from '@/server/testing/assignment';
import { createSmsNumber, PLATFORM_KEY } from '@/server/testing/factories';
import { db } from '@/server/db/client';
import { staff } from '@/db/schema';
import { eq } from 'drizzle-orm';
import { sweepBusiness } from './index';
import { assignmentSettings } from './settings';

/** Auto-assignment's settings over REST (docs/api.md#auto-assignment): bounds, tenancy, a location's own policy. */

describe('auto-assignment settings', () => {
  it('reads the defaults, sets the business’s fields given, and a location’s own policy', async () => {
    const t = await restTenant();
    const north = await createLocation(t.business.id, { name: 'North' });
    const got = await getJson(`${t.base}/assignment`, t.key);
    expect(got).toEqual({
      status: 200,
      body: {
        assignment_policy: 'off',
        assignment_capacity: 10,
        hand_back_on_away: false,
        locations: [{ location_id: north.id, name: 'North', assignment_policy: null, effective_policy: 'off' }],
      },
    });
    const set = await putJson(`${t.base}/assignment`, t.key, { assignment_policy: 'balanced', assignment_capacity: 4 });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ assignment_policy: 'balanced', assignment_capacity: 4, hand_back_on_away: false });
    expect((await putJson(`${t.base}/assignment`, t.key, { hand_back_on_away: true })).body).toMatchObject({
      assignment_policy: 'balanced',
      assignment_capacity: 4,
      hand_back_on_away: true,
    });
    const loc = await putJson(`${t.base}/locations/${north.id}/assignment`, t.key, { assignment_policy: 'off' });
    expect(loc.body.locations).toEqual([
      { location_id: north.id, name: 'North', assignment_policy: 'off', effective_policy: 'off' },
    ]);
    const list = await getJson(`${t.base}/locations`, t.key);
    expect(list.body[0]).toMatchObject({ location_id: north.id, assignment_policy: 'off' });
    const back = await putJson(`${t.base}/locations/${north.id}/assignment`, t.key, { assignment_policy: null });
    expect(back.body.locations[0]).toMatchObject({ assignment_policy: null, effective_policy: 'balanced' });
  });

  it('refuses out-of-bounds values with 422 and the field, and other businesses’ locations with 404', async () => {
    const t = await restTenant();
    const other = await restTenant();
    const theirs = await createLocation(other.business.id);
    for (const [body, loc] of [
      [{ assignment_capacity: 1001 }, ['body', 'assignment_capacity']],
      [{ assignment_capacity: -1 }, ['body', 'assignment_capacity']],
      [{ assignment_capacity: 2.5 }, ['body', 'assignment_capacity']],
      [{ assignment_policy: 'random' }, ['body', 'assignment_policy']],
      [{ hand_back_on_away: 'yes' }, ['body', 'hand_back_on_away']],
    ] as const) {
      const res = await putJson(`${t.base}/assignment`, t.key, body);
      expect(res.status).toBe(422);
      expect(res.body.detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(loc);
    }
    expect((await putJson(`${t.base}/locations/${theirs.id}/assignment`, t.key, { assignment_policy: 'off' })).status).toBe(404);
    expect((await getJson(`${other.base}/assignment`, t.key)).status).toBe(403);
  });

  it('a change sweeps at once: turning the policy on gives the conversations already waiting', async () => {
    const t = await restTenant();
    await db.update(staff).set({ active: false }).where(eq(staff.id, t.owner.id));
    const number = await createSmsNumber(t.business.id);
    const b = { businessId: t.business.id, number: number.phoneNumber };
    const ana = await createStaff(t.business.id);
    const waiting = await newClientTexts(b);
    await settle();
    expect(await assigneeOf(b.businessId, waiting.conversationId)).toBeNull();
    await putJson(`${t.base}/assignment`, t.key, { assignment_policy: 'round_robin' });
    const [job] = await sweepJobs(b.businessId);
    expect(job).toBeDefined();
    await sweepBusiness(b.businessId); // what the job does
    expect(await assigneeOf(b.businessId, waiting.conversationId)).toBe(ana.id);
  });
});

describe('auto-assignment in onboarding', () => {
  it('takes the business’s settings and a location’s own policy, with the same bounds', async () => {
    const onboard = (body: object) => postJson('/api/v1/business/onboard', { 'x-api-key': PLATFORM_KEY() }, body);
    const base = { external_id: `biz-${Date.now()}`, name: 'Assigning Studio', timezone: 'Europe/Paris' };
    const bad = await onboard({ ...base, settings: { assignment_capacity: 5000 } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(['body', 'settings', 'assignment_capacity']);
    const res = await onboard({
      ...base,
      settings: { assignment_policy: 'round_robin', assignment_capacity: 3, hand_back_on_away: true },
      locations: [{ external_id: 'north', name: 'North', assignment_policy: 'balanced' }],
    });
    expect(res.status).toBeLessThan(300);
    const settings = await assignmentSettings(res.body.business_id);
    expect(settings).toMatchObject({ assignment_policy: 'round_robin', assignment_capacity: 3, hand_back_on_away: true });
    expect(settings.locations).toMatchObject([{ name: 'North', assignment_policy: 'balanced', effective_policy: 'balanced' }]);
  });
});
