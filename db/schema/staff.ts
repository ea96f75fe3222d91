import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, pgTable, text, timestamp, unique, uniqueIndex } from 'drizzle-orm/pg-core';
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
  ],
);
