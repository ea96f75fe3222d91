import type { Caller } from '@/server/services/auth';
import { requireStaff } from '@/server/services/directory';

/** The staff member acting: the session's, else none (an API key acts as the platform/business). */
export const actingStaff = (caller: Caller): number | null => (caller.kind === 'session' ? caller.staffId : null);

/** Whose `mine`: the session's staff, or a `staff_id` query (checked against the business) with an API key. */
export async function staffForMine(caller: Caller, businessId: number, queryStaffId: number | undefined): Promise<number | null> {
  if (queryStaffId !== undefined) return requireStaff(businessId, queryStaffId, ['query', 'staff_id']);
  return actingStaff(caller);
}
