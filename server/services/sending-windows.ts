import { and, asc, eq } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { businesses, locations } from '@/db/schema';
import { AppError } from '@/server/errors';
import { locationWindowOut, sendingWindowOut } from '@/server/schemas/sending-windows';
import { SENDING_WINDOW_PRESETS, type SendingWindow } from '@/server/shared/quiet-hours';

/**
 * Quiet hours settings (docs/api.md#quiet-hours): the business's sending window and each location's
 * own (or none: the business's), over REST and the inbox's settings page. What they hold is
 * decided in server/services/compliance/quiet-hours.ts.
 */

export async function sendingWindowSettings(businessId: number, tx: Tx = db) {
  const [business] = await tx
    .select({ timezone: businesses.timezone, start: businesses.sendingWindowStart, end: businesses.sendingWindowEnd })
    .from(businesses)
    .where(eq(businesses.id, businessId));
  if (!business) throw AppError.notFound('Business');
  const rows = await tx
    .select()
    .from(locations)
    .where(eq(locations.businessId, businessId))
    .orderBy(asc(locations.name), asc(locations.id));
  return {
    time_zone: business.timezone,
    sending_window: sendingWindowOut(business),
    locations: rows.map((l) => ({
      location_id: l.id,
      name: l.name,
      timezone: l.timezone,
      sending_window: locationWindowOut(l),
    })),
    presets: SENDING_WINDOW_PRESETS.map((p) => ({ id: p.id, name: p.name, source: p.source, ...sendingWindowOut(p) })),
  };
}

export async function setBusinessSendingWindow(businessId: number, window: SendingWindow, tx: Tx = db) {
  await tx
    .update(businesses)
    .set({ sendingWindowStart: window.start, sendingWindowEnd: window.end, updatedAt: new Date() })
    .where(eq(businesses.id, businessId));
  return sendingWindowSettings(businessId, tx);
}

/** A location's own window, or null: the location keeps to the business's. */
export async function setLocationSendingWindow(
  businessId: number,
  locationId: number,
  window: SendingWindow | null,
  tx: Tx = db,
) {
  const [row] = await tx
    .update(locations)
    .set({ sendingWindowStart: window?.start ?? null, sendingWindowEnd: window?.end ?? null })
    .where(and(eq(locations.businessId, businessId), eq(locations.id, locationId)))
    .returning({ id: locations.id });
  if (!row) throw AppError.notFound('Location');
  return sendingWindowSettings(businessId, tx);
}
