import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { APPOINTMENT_STATUSES, type AppointmentStatus } from '../../server/shared/appointments';
import { clients } from './clients';
import { sameBusinessFk, tenantKeys } from './columns';
import { oneOf } from './enums';
import { locations } from './locations';
import { messages } from './messages';
import { staff } from './staff';

/**
 * A copy of an appointment the business's platform owns (docs/api.md#appointments), upserted by the
 * platform's own id, to remind its client about and report on. Canceling keeps the row.
 */
export const appointments = pgTable(
  'appointments',
  {
    ...tenantKeys(),
    /** The platform's id: at most 255 characters, unique per business. */
    externalId: text('external_id').notNull(),
    clientId: integer('client_id').notNull(),
    locationId: integer('location_id'),
    staffId: integer('staff_id'),
    startsAt: timestamp('starts_at', { withTimezone: true }).notNull(),
    endsAt: timestamp('ends_at', { withTimezone: true }).notNull(),
    service: text('service'),
    status: text('status').$type<AppointmentStatus>().notNull().default('booked'),
    notes: text('notes'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('appointments_business_external_id_key').on(t.businessId, t.externalId),
    unique('appointments_business_id_id_key').on(t.businessId, t.id),
    // The list by time; a client's appointments by time (the client panel, the reply reader).
    index('appointments_business_starts_idx').on(t.businessId, t.startsAt, t.id),
    index('appointments_business_client_starts_idx').on(t.businessId, t.clientId, t.startsAt),
    sameBusinessFk('appointments_client_fk', t.businessId, t.clientId, clients).onDelete('cascade'),
    sameBusinessFk('appointments_location_fk', t.businessId, t.locationId, locations),
    sameBusinessFk('appointments_staff_fk', t.businessId, t.staffId, staff),
    check('appointments_status_check', oneOf(t.status, APPOINTMENT_STATUSES)),
    check('appointments_times_check', sql`${t.startsAt} < ${t.endsAt}`),
    check('appointments_external_id_check', sql`char_length(${t.externalId}) between 1 and 255`),
    check('appointments_service_check', sql`char_length(${t.service}) <= 200`),
    check('appointments_notes_check', sql`char_length(${t.notes}) <= 2000`),
  ],
);

/**
 * A reminder of an appointment: the scheduled text (send later) and the rule it was made for
 * (docs/api.md#reminders). `active` while it is pending or went: at most one active reminder per
 * rule (`before_seconds`) and appointment time, so moving an appointment back and forth never
 * reminds twice for one time. A pending one canceled (moved, canceled, confirmed) is no longer active.
 */
export const appointmentReminders = pgTable(
  'appointment_reminders',
  {
    businessId: integer('business_id').notNull(),
    appointmentId: integer('appointment_id').notNull(),
    messageId: bigint('message_id', { mode: 'number' }).notNull().primaryKey(),
    beforeSeconds: integer('before_seconds').notNull(),
    /** The appointment's start this reminder was written for. */
    forStartsAt: timestamp('for_starts_at', { withTimezone: true }).notNull(),
    asksConfirmation: boolean('asks_confirmation').notNull(),
    active: boolean('active').notNull().default(true),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    sameBusinessFk('appointment_reminders_appointment_fk', t.businessId, t.appointmentId, appointments).onDelete('cascade'),
    sameBusinessFk('appointment_reminders_message_fk', t.businessId, t.messageId, messages).onDelete('cascade'),
    uniqueIndex('appointment_reminders_once_key')
      .on(t.appointmentId, t.beforeSeconds, t.forStartsAt)
      .where(sql`${t.active}`),
    index('appointment_reminders_appointment_idx').on(t.businessId, t.appointmentId),
  ],
);

/**
 * A review request of a completed appointment (docs/api.md#review-requests): the scheduled text or
 * email (send later) that asks its client for a review. `active` unless it was canceled because the
 * appointment left `completed` before it went: at most one active request per appointment, so
 * upserting a completed appointment again never asks twice.
 */
export const reviewRequests = pgTable(
  'review_requests',
  {
    businessId: integer('business_id').notNull(),
    messageId: bigint('message_id', { mode: 'number' }).notNull().primaryKey(),
    appointmentId: integer('appointment_id').notNull(),
    clientId: integer('client_id').notNull(),
    active: boolean('active').notNull().default(true),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    sameBusinessFk('review_requests_appointment_fk', t.businessId, t.appointmentId, appointments).onDelete('cascade'),
    sameBusinessFk('review_requests_message_fk', t.businessId, t.messageId, messages).onDelete('cascade'),
    uniqueIndex('review_requests_once_key')
      .on(t.businessId, t.appointmentId)
      .where(sql`${t.active}`),
    index('review_requests_appointment_idx').on(t.businessId, t.appointmentId),
  ],
);

/**
 * Each client's latest review request, which holds the cooldown (docs/api.md#review-requests): one
 * row per client, taken by a conditional upsert (`on conflict … do update … where requested_at` is
 * older than the cooldown), so of two completions of one client at once exactly one takes it, the
 * other waiting on the row and then finding it taken. Deleted when its request is canceled (the
 * appointment left `completed`): that client was never asked.
 */
export const reviewRequestCooldowns = pgTable(
  'review_request_cooldowns',
  {
    businessId: integer('business_id').notNull(),
    clientId: integer('client_id').notNull(),
    requestedAt: timestamp('requested_at', { withTimezone: true }).notNull(),
    /** The request that holds it; null only between the claim and the request's write, in one transaction. */
    messageId: bigint('message_id', { mode: 'number' }),
  },
  (t) => [
    primaryKey({ name: 'review_request_cooldowns_pkey', columns: [t.businessId, t.clientId] }),
    sameBusinessFk('review_request_cooldowns_client_fk', t.businessId, t.clientId, clients).onDelete('cascade'),
  ],
);
