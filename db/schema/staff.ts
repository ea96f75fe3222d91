import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  smallint,
  text,
  timestamp,
  unique,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { StoredNotificationPreferences } from '../../server/shared/notifications';
import type { Schedule } from '../../server/shared/opening-hours';
import { STAFF_ROLES, oneOf, type StaffRole } from './enums';
import { locations } from './locations';
import { sameBusinessFk, tenantKeys } from './columns';

export const staff = pgTable(
  'staff',
  {
    ...tenantKeys(),
    externalId: text('external_id'),
    name: text('name').notNull(),
    email: text('email'),
    phoneNumber: text('phone_number'),
    gender: text('gender'),
    imageUrl: text('image_url'),
    role: text('role').$type<StaffRole>().notNull().default('staff'),
    locationId: integer('location_id'),
    active: boolean('active').notNull().default(true),
    /**
     * Availability (docs/api.md#staff-availability): the Away switch, and when it last changed. An
     * away staff member is never assigned a conversation.
     */
    away: boolean('away').notNull().default(false),
    awayChangedAt: timestamp('away_changed_at', { withTimezone: true }),
    /** Their own weekly schedule (opening hours' shape); null: they work their location's opening hours. */
    schedule: jsonb('schedule').$type<Schedule>(),
    /** How many conversations waiting for their reply auto-assignment gives them at most; null: the business's default. */
    capacity: smallint('capacity'),
    /** When auto-assignment last gave them a conversation: round-robin gives the next to whoever waited longest. */
    lastAssignedAt: timestamp('last_assigned_at', { withTimezone: true }),
    /**
     * Their notification choices (docs/api.md#notifications), per kind and channel, only what
     * differs from the defaults (server/shared/notifications.ts); null: all defaults.
     */
    notificationPreferences: jsonb('notification_preferences').$type<StoredNotificationPreferences>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('staff_business_external_id_key').on(t.businessId, t.externalId),
    unique('staff_business_id_id_key').on(t.businessId, t.id),
    // Within the business: a staff member's location is one of its own.
    sameBusinessFk('staff_location_fk', t.businessId, t.locationId, locations),
    index('staff_business_name_idx').on(t.businessId, sql`lower(${t.name})`),
    check('staff_role_check', oneOf(t.role, STAFF_ROLES)),
    check('staff_capacity_check', sql`${t.capacity} is null or ${t.capacity} between 0 and 1000`),
    check(
      'staff_notification_preferences_shape_check',
      sql`${t.notificationPreferences} is null or jsonb_typeof(${t.notificationPreferences}) = 'object'`,
    ),
    check('staff_schedule_shape_check', sql`${t.schedule} is null or jsonb_typeof(${t.schedule}) = 'object'`),
  ],
);
