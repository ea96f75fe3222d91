import { describe, expect, it } from 'vitest';
import { createLocation, createTenant } from '@/server/testing/factories';
import { staffCaller } from '@/server/testing/trpc';

describe('auto-assignment settings in the inbox (tRPC)', () => {
  it('reads and sets the business’s settings and a location’s policy, within the business only', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const studio = await createLocation(a.business.id, { name: 'Studio' });
    const theirs = await createLocation(b.business.id, { name: 'Theirs' });
    const trpc = await staffCaller(a.sessionToken);
    expect(await trpc.inbox.assignmentSettings()).toMatchObject({ assignment_policy: 'off', assignment_capacity: 10 });
    expect(
      await trpc.inbox.setBusinessAssignment({
        assignment_policy: 'round_robin',
        assignment_capacity: 3,
        hand_back_on_away: true,
      }),
    ).toMatchObject({ assignment_policy: 'round_robin', assignment_capacity: 3, hand_back_on_away: true });
    const set = await trpc.inbox.setLocationAssignment({ locationId: studio.id, assignment_policy: 'balanced' });
    expect(set.locations).toEqual([
      { location_id: studio.id, name: 'Studio', assignment_policy: 'balanced', effective_policy: 'balanced' },
    ]);
    await expect(trpc.inbox.setLocationAssignment({ locationId: theirs.id, assignment_policy: 'off' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(trpc.inbox.setBusinessAssignment({ assignment_capacity: 1001 })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    expect((await (await staffCaller(b.sessionToken)).inbox.assignmentSettings()).assignment_policy).toBe('off');
  });
});
