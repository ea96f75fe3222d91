import { sql } from 'drizzle-orm';
import { check, integer, jsonb, pgTable, timestamp, unique } from 'drizzle-orm/pg-core';
import type { DatedHours, WeeklyHours } from '../../server/shared/opening-hours';
import { sameBusinessFk, tenantKeys } from './columns';
import { locations } from './locations';

/**
 * Opening hours (docs/api.md#opening-hours): a business's own (`location_id` null) and a location's
 * own, one row each at most; a location without a row keeps to the business's, a business without
 * one is open around the clock. Written only through server/services/opening-hours.ts, which
 * validates the schedule (server/shared/opening-hours.ts): intervals are minutes of the local day,
 * `{start, end}`, an end past 1440 running into the next day. Not quiet hours' sending window.
 */
export const openingHours = pgTable(
  'opening_hours',
  {
    ...tenantKeys(),
    locationId: integer('location_id'),
    /** `{monday: [{start, end}], …, sunday: […]}` */
    weekly: jsonb('weekly').$type<WeeklyHours>().notNull(),
    /** `[{date: 'YYYY-MM-DD', name, intervals: [{start, end}]}]` by date; no intervals: closed all day. */
    exceptions: jsonb('exceptions').$type<DatedHours[]>().notNull().default([]),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // One row per owner: the business's (null location) and each location's.
    unique('opening_hours_owner_key').on(t.businessId, t.locationId).nullsNotDistinct(),
    sameBusinessFk('opening_hours_location_fk', t.businessId, t.locationId, locations).onDelete('cascade'),
    check('opening_hours_shape_check', sql`jsonb_typeof(${t.weekly}) = 'object' and jsonb_typeof(${t.exceptions}) = 'array'`),
  ],
);
