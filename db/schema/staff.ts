import { sql } from 'drizzle-orm';
import { boolean, check, foreignKey, index, integer, pgTable, text, timestamp, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import { businesses } from './businesses';
import { STAFF_ROLES, oneOf, type StaffRole } from './enums';
import { locations } from './locations';

export const staff = pgTable(
  'staff',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
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
    foreignKey({
      name: 'staff_location_fk',
      columns: [t.businessId, t.locationId],
      foreignColumns: [locations.businessId, locations.id],
    }),
    index('staff_business_name_idx').on(t.businessId, sql`lower(${t.name})`),
    check('staff_role_check', oneOf(t.role, STAFF_ROLES)),
  ],
);
