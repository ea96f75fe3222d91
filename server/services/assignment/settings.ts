import { asc, eq } from 'drizzle-orm';
import { businesses, locations, type AssignmentPolicy } from '@/db/schema';
import { db, type Tx } from '@/server/db/client';
import { AppError } from '@/server/errors';
import { mergeBusinessSettings } from '@/server/services/business-settings';
import { updateLocation } from '@/server/services/locations';
import { DEFAULT_CAPACITY } from '@/server/services/staff-availability';
import { policyOf, scheduleSweep } from './index';

/** Auto-assignment's settings (docs/api.md#auto-assignment): the business's, and each location's policy. */

export async function assignmentSettings(businessId: number, tx: Tx = db) {
  const [business] = await tx.select({ settings: businesses.settings }).from(businesses).where(eq(businesses.id, businessId));
  if (!business) throw AppError.notFound('Business');
  const rows = await tx
    .select({ id: locations.id, name: locations.name, policy: locations.assignmentPolicy })
    .from(locations)
    .where(eq(locations.businessId, businessId))
    .orderBy(asc(locations.name), asc(locations.id));
  const s = business.settings;
  return {
    assignment_policy: policyOf(null, s),
    assignment_capacity: s.assignment_capacity ?? DEFAULT_CAPACITY,
    hand_back_on_away: s.hand_back_on_away ?? false,
    locations: rows.map((l) => ({
      location_id: l.id,
      name: l.name,
      assignment_policy: l.policy,
      effective_policy: policyOf(l.policy, s),
    })),
  };
}

/**
 * Sets the business's fields given (others keep theirs). A sweep follows at once: a policy turned
 * on or a capacity raised may give waiting conversations to someone now.
 */
export async function setBusinessAssignment(
  businessId: number,
  input: { assignment_policy?: AssignmentPolicy; assignment_capacity?: number; hand_back_on_away?: boolean },
  tx: Tx = db,
) {
  await mergeBusinessSettings(businessId, input, tx);
  await scheduleSweep(businessId, 'now', tx);
  return assignmentSettings(businessId, tx);
}

/** A location's own policy, or null for the business's; 404 for a location of another business. */
export async function setLocationAssignment(businessId: number, locationId: number, own: AssignmentPolicy | null, tx: Tx = db) {
  await updateLocation(businessId, locationId, { assignmentPolicy: own }, tx);
  await scheduleSweep(businessId, 'now', tx);
  return assignmentSettings(businessId, tx);
}
