import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { db } from '@/db/client';
import { staff } from '@/db/schema';
import { TTL_CACHE_MS } from '@/server/lib/ttl-cache';
import { createClient, createConversation, createStaff, createTenant } from '@/server/testing/factories';
import { api, jsonOf } from '@/server/testing/http';

/** `staff_id` on the conversation list and its filter counts (whose `mine` an API key lists). */
describe('staff_id of a mine scope', () => {
  afterEach(() => vi.restoreAllMocks());

  const setActive = (id: number, active: boolean) => db.update(staff).set({ active }).where(eq(staff.id, id));

  it("is checked against the business; an active member is remembered for the cache's lifetime, a refusal never", async () => {
    const t = await createTenant();
    const other = await createTenant();
    const member = await createStaff(t.business.id);
    await createConversation(t.business.id, (await createClient(t.business.id)).id, { assignedStaffId: member.id });
    const headers = { 'x-api-key': t.apiKey };
    const list = (staffId: number) =>
      api.get(`/api/v1/businesses/${t.business.id}/conversations?assignment=mine&staff_id=${staffId}`, { headers });
    const filters = (staffId: number) =>
      api.get(`/api/v1/businesses/${t.business.id}/conversations/filters?staff_id=${staffId}`, { headers });

    // Another business's member, or none: 422 on the query's staff_id, every time.
    for (const staffId of [other.owner.id, 99_999_999]) {
      for (const res of [await list(staffId), await filters(staffId), await list(staffId)]) {
        expect(res.status, String(staffId)).toBe(422);
        expect((await jsonOf(res)).detail[0].loc).toEqual(['query', 'staff_id']);
      }
    }

    // Inactive: refused, and the refusal is not remembered: once active again, accepted at once.
    await setActive(member.id, false);
    expect((await list(member.id)).status).toBe(422);
    await setActive(member.id, true);
    const mine = await list(member.id);
    expect(mine.status).toBe(200);
    expect((await jsonOf(mine)).total_conversations).toBe(1);

    // Deactivated now: still accepted while remembered, by the list and the counts alike…
    await setActive(member.id, false);
    expect((await list(member.id)).status).toBe(200);
    expect((await filters(member.id)).status).toBe(200);
    // …and refused once the entry expires.
    const now = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(now + TTL_CACHE_MS + 1);
    const expired = await filters(member.id);
    expect(expired.status).toBe(422);
    expect((await jsonOf(expired)).detail[0]).toMatchObject({
      loc: ['query', 'staff_id'],
      msg: expect.stringContaining('not active'),
    });
  });
});
