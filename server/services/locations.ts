import { and, asc, eq } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { locations } from '@/db/schema';
import { AppError } from '@/server/errors';
import { locationWindowOut } from '@/server/schemas/sending-windows';

export async function listLocations(businessId: number, tx: Tx = db) {
  const rows = await tx
    .select()
    .from(locations)
    .where(eq(locations.businessId, businessId))
    .orderBy(asc(locations.name), asc(locations.id));
  return rows.map((l) => ({
    location_id: l.id,
    external_id: l.externalId,
    name: l.name,
    address: l.address,
    phone_number: l.phoneNumber,
    timezone: l.timezone,
    sending_window: locationWindowOut(l),
    after_hours_reply: l.afterHoursReply,
    assignment_policy: l.assignmentPolicy,
  }));
}

/** Writes a location's own settings; 404 when it is not one of the business's (tenancy). */
export async function updateLocation(
  businessId: number,
  locationId: number,
  set: Partial<Pick<typeof locations.$inferInsert, 'assignmentPolicy'>>,
  tx: Tx = db,
) {
  const [row] = await tx
    .update(locations)
    .set(set)
    .where(and(eq(locations.businessId, businessId), eq(locations.id, locationId)))
    .returning({ id: locations.id });
  if (!row) throw AppError.notFound('Location');
}
