import { sql } from 'drizzle-orm';
import { check, index, jsonb, pgTable, smallint, text, timestamp, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import type { ReminderRule } from '../../server/shared/appointments';
import { tenantKeys } from './columns';
import { ASSIGNMENT_POLICIES, oneOf, type AssignmentPolicy } from './enums';

export const locations = pgTable(
  'locations',
  {
    ...tenantKeys(),
    externalId: text('external_id'),
    name: text('name').notNull(),
    address: text('address'),
    phoneNumber: text('phone_number'),
    timezone: text('timezone'),
    /** The location's own quiet hours (docs/api.md#quiet-hours), minutes of the day; both null: the business's. */
    sendingWindowStart: smallint('sending_window_start'),
    sendingWindowEnd: smallint('sending_window_end'),
    /** The location's own auto-assignment policy (docs/api.md#auto-assignment); null: the business's. */
    assignmentPolicy: text('assignment_policy').$type<AssignmentPolicy>(),
    /** The location's own after-hours answer (docs/api.md#after-hours-answer); null: the business's. */
    afterHoursReply: text('after_hours_reply'),
    /** The location's own reminder rules (docs/api.md#reminder-rules); null: the business's. */
    reminderRules: jsonb('reminder_rules').$type<ReminderRule[]>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('locations_business_external_id_key').on(t.businessId, t.externalId),
    // Tenant rows point at each other by (business_id, id): see docs/production.md (Citus).
    unique('locations_business_id_id_key').on(t.businessId, t.id),
    index('locations_business_id_idx').on(t.businessId),
    check(
      'locations_assignment_policy_check',
      sql`${t.assignmentPolicy} is null or ${oneOf(t.assignmentPolicy, ASSIGNMENT_POLICIES)}`,
    ),
    check(
      'locations_sending_window_check',
      sql`(${t.sendingWindowStart} is null and ${t.sendingWindowEnd} is null) or (${t.sendingWindowStart} >= 0 and ${t.sendingWindowStart} < ${t.sendingWindowEnd} and ${t.sendingWindowEnd} <= 1440)`,
    ),
  ],
);
