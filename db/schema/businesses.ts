import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, jsonb, pgTable, smallint, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import type { ReminderRule } from '../../server/shared/appointments';
import type { ReviewRequestSettings } from '../../server/shared/review-requests';
import { ONBOARDING_STATUSES, oneOf, type AssignmentPolicy } from './enums';

export type BusinessSettings = {
  record_calls?: boolean;
  missed_call_text?: string | null;
  /** Spoken before a recorded call is connected; null or absent: the default notice (server/schemas/voice.ts). */
  recording_notice?: string | null;
  /** The one text confirming an opt-out (docs/api.md#opt-out-wording): null → the default, `""` → none. */
  opt_out_confirmation?: string | null;
  /** The automatic answer to HELP / INFO: null → the default, `""` → none. */
  help_reply?: string | null;
  /** Auto-assignment (docs/api.md#auto-assignment): absent → `off`; a location may have its own. */
  assignment_policy?: AssignmentPolicy;
  /** Conversations waiting for a staff member's reply that assignment gives them at most, unless their own capacity says otherwise; absent → 10. */
  assignment_capacity?: number;
  /** Going Away hands one's conversations waiting for a reply back to assignment; absent → false. */
  hand_back_on_away?: boolean;
  /** The answer to a client who writes while closed (docs/api.md#after-hours-answer): null or absent: off. */
  after_hours_reply?: string | null;
  /** BCP 47; how dates and times are written to clients (`{next_opening}`). Absent: en-US. */
  locale?: string;
  /** How long an email notification waits for the conversation to be read or answered (docs/api.md#notifications); absent: 3. */
  notification_email_delay_minutes?: number;
  /** Conversations waiting longer than this many business minutes go in the waiting digest; null: no digest; absent: 60. */
  waiting_digest_minutes?: number | null;
  /** Appointment reminders (docs/api.md#reminder-rules): absent → the defaults; `[]` → none. */
  reminder_rules?: ReminderRule[];
  /** A client's reply asking to cancel cancels the appointment (docs/api.md#replies-to-reminders); absent: false, staff decide. */
  cancel_on_request?: boolean;
  /** Review requests after a completed appointment (docs/api.md#review-requests); absent: off, the defaults. */
  review_requests?: Partial<ReviewRequestSettings>;
};
export type OnboardingStep = {
  name: string;
  status: (typeof ONBOARDING_STATUSES)[number];
  detail: string | null;
  done?: number;
  total?: number;
};

export const businesses = pgTable(
  'businesses',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    externalId: text('external_id'),
    name: text('name').notNull(),
    timezone: text('timezone').notNull().default('UTC'),
    country: text('country').notNull().default('US'),
    /**
     * Quiet hours (docs/api.md#quiet-hours): automated texts go out only between these minutes of the
     * recipient's local day, [start, end). Default 08:00–21:00, the US federal TCPA window.
     */
    sendingWindowStart: smallint('sending_window_start').notNull().default(480),
    sendingWindowEnd: smallint('sending_window_end').notNull().default(1260),
    fromEmail: text('from_email'),
    fromName: text('from_name'),
    settings: jsonb('settings').$type<BusinessSettings>().notNull().default({}),
    onboardingStatus: text('onboarding_status').$type<(typeof ONBOARDING_STATUSES)[number]>().notNull().default('completed'),
    onboardingSteps: jsonb('onboarding_steps').$type<OnboardingStep[]>().notNull().default([]),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('businesses_external_id_key').on(t.externalId),
    check('businesses_onboarding_status_check', oneOf(t.onboardingStatus, ONBOARDING_STATUSES)),
    check('businesses_country_check', sql`${t.country} ~ '^[A-Z]{2}$'`),
    check(
      'businesses_sending_window_check',
      sql`${t.sendingWindowStart} >= 0 and ${t.sendingWindowStart} < ${t.sendingWindowEnd} and ${t.sendingWindowEnd} <= 1440`,
    ),
  ],
);

/** A business's Twilio numbers. Globally unique: an inbound webhook finds its business by `To`. */
export const businessSmsNumbers = pgTable(
  'business_sms_numbers',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    phoneNumber: text('phone_number').notNull(),
    isDefault: boolean('is_default').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('business_sms_numbers_phone_number_key').on(t.phoneNumber),
    index('business_sms_numbers_business_id_idx').on(t.businessId),
  ],
);

/** Sender addresses; inbound email finds its business by the address it was sent to. */
export const businessEmailSenders = pgTable(
  'business_email_senders',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    businessId: integer('business_id')
      .notNull()
      .references(() => businesses.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    name: text('name'),
    isDefault: boolean('is_default').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('business_email_senders_email_key').on(sql`lower(${t.email})`),
    index('business_email_senders_business_id_idx').on(t.businessId),
  ],
);
