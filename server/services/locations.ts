import { asc, eq } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { locations } from '@/db/schema';
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
  }));
}
