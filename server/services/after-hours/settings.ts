import { and, eq, sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { businesses, locations } from '@/db/schema';
import { AppError } from '@/server/errors';
import { businessOpeningHours, type AppliedOpeningHours } from '@/server/services/opening-hours';
import { DEFAULT_LOCALE } from '@/server/shared/after-hours';
import { openingClock } from '@/server/shared/opening-hours';

/**
 * The after-hours answer's settings for the inbox's page (docs/api.md#after-hours-answer): the
 * business's text and locale, each location's own text, and what the preview needs to render the
 * variables as a client would read them (REST sets the same fields through onboarding).
 */

/**
 * The opening a client would be told of: the next one if closed now; if open now, the one after
 * the next closing (what a client writing at closing time reads). Null when none is ahead.
 */
function previewOpening(hours: AppliedOpeningHours, now: Date) {
  const clock = openingClock(hours);
  const open = clock.isOpen(now);
  const from = open ? clock.nextClosing(now) : now;
  return { open, next_opening: from ? (clock.nextOpening(from)?.toISOString() ?? null) : null, time_zone: hours.timeZone };
}

export async function afterHoursSettings(businessId: number, now = new Date(), tx: Tx = db) {
  const [business] = await tx
    .select({ name: businesses.name, settings: businesses.settings })
    .from(businesses)
    .where(eq(businesses.id, businessId));
  if (!business) throw AppError.notFound('Business');
  const rows = await tx
    .select({ id: locations.id, name: locations.name, text: locations.afterHoursReply })
    .from(locations)
    .where(eq(locations.businessId, businessId))
    .orderBy(locations.name, locations.id);
  const hours = await businessOpeningHours(businessId, tx);
  return {
    business_name: business.name,
    locale: business.settings.locale ?? DEFAULT_LOCALE,
    business: { text: business.settings.after_hours_reply ?? null, ...previewOpening(hours.forLocation(null), now) },
    locations: rows.map((l) => ({
      location_id: l.id,
      name: l.name,
      text: l.text,
      ...previewOpening(hours.forLocation(l.id), now),
    })),
  };
}

/** The business's answer (`locationId` null; blank or null: off), or a location's own (null: the business's; blank: none there). */
export async function setAfterHoursReply(businessId: number, locationId: number | null, text: string | null, tx: Tx = db) {
  if (locationId === null) {
    await tx
      .update(businesses)
      .set({
        settings: sql`${businesses.settings} || jsonb_build_object('after_hours_reply', ${text?.trim() || null}::text)`,
        updatedAt: sql`now()`,
      })
      .where(eq(businesses.id, businessId));
    return;
  }
  const [row] = await tx
    .update(locations)
    .set({ afterHoursReply: text })
    .where(and(eq(locations.businessId, businessId), eq(locations.id, locationId)))
    .returning({ id: locations.id });
  if (!row) throw AppError.notFound('Location');
}

/** The business's locale (already checked and canonical: schemas/after-hours.ts Locale). */
export async function setLocale(businessId: number, locale: string, tx: Tx = db) {
  await tx
    .update(businesses)
    .set({ settings: sql`${businesses.settings} || jsonb_build_object('locale', ${locale}::text)`, updatedAt: sql`now()` })
    .where(eq(businesses.id, businessId));
}
