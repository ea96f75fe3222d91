import { TtlCache } from '@/server/lib/ttl-cache';
import type { Caller } from '@/server/services/auth';
import { requireStaff } from '@/server/services/directory';

/** The staff member acting: the session's, else none (an API key acts as the platform/business). */
export const actingStaff = (caller: Caller): number | null => (caller.kind === 'session' ? caller.staffId : null);

/**
 * Active staff members of a business that a `staff_id` query named, remembered like API keys
 * (TtlCache): the list and its filter counts run on every inbox refresh, and the check was a round
 * trip of its own. Only for this read-only scope (whose `mine` an API key lists, a key that can
 * read the whole business anyway): a member deactivated is refused here at most TTL_CACHE_MS later;
 * writes naming a staff member check the database every time.
 */
const mineStaff = new TtlCache<true>();

/** Whose `mine`: the session's staff, or a `staff_id` query (checked against the business) with an API key. */
export async function staffForMine(caller: Caller, businessId: number, queryStaffId: number | undefined): Promise<number | null> {
  if (queryStaffId === undefined) return actingStaff(caller);
  const key = `${businessId}:${queryStaffId}`;
  if (mineStaff.get(key)) return queryStaffId;
  const id = await requireStaff(businessId, queryStaffId, ['query', 'staff_id']);
  mineStaff.set(key, true);
  return id;
}
