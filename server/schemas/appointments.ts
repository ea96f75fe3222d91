import { z } from 'zod';
import {
  APPOINTMENT_STATUSES,
  durationSeconds,
  DURATION_PATTERN,
  MAX_APPOINTMENT_NOTES,
  MAX_DURATION_LENGTH,
  MAX_EXTERNAL_ID,
  MAX_LISTED_REMINDERS,
  MAX_REMINDER_BEFORE_SECONDS,
  MAX_REMINDER_RULES,
  MAX_REMINDER_TEXT,
  MAX_SERVICE_NAME,
  MIN_REMINDER_BEFORE_SECONDS,
  namesVariable,
  REMINDER_VARIABLES,
  REVIEW_REQUEST_VARIABLES,
  unknownReminderVariables,
  type AppointmentVariable,
} from '@/server/shared/appointments';
import {
  DEFAULT_REVIEW_TEXT,
  MAX_REVIEW_COOLDOWN_DAYS,
  MAX_REVIEW_DELAY_MINUTES,
  MAX_REVIEW_LINK,
  MIN_REVIEW_COOLDOWN_DAYS,
  MIN_REVIEW_DELAY_MINUTES,
  REVIEW_EMAIL_SUBJECT,
  REVIEW_REQUEST_CHANNELS,
} from '@/server/shared/review-requests';
import { id, idParam, isoTimestamp, paginationQuery, timestampOut } from './common';

/** docs/api.md#appointments and #reminder-rules. Rules that need the database (ids of this business) are the service's. */

const Status = z.enum(APPOINTMENT_STATUSES).meta({ id: 'AppointmentStatus' });

/**
 * The platform's id in a path: 1 to 255 characters, URL-decoded, taken as written (no trimming).
 * Its length is a 422 (`value_error`), not the 404 of an integer id past its range: a PUT with a
 * 256-character id is a bad request, not an unknown appointment. "." and ".." are not ids: every URL
 * client and the router resolve them as dot segments (`…/appointments/.` is `…/appointments/`,
 * %2E included), so no request could name such an appointment; a raw request that still carries one
 * is a 422.
 */
const DOT_SEGMENTS: readonly string[] = ['.', '..'];
const externalIdParam = z
  .string()
  .superRefine((v, ctx) => {
    if (v.length < 1 || v.length > MAX_EXTERNAL_ID) {
      ctx.addIssue({ code: 'custom', message: `must be 1 to ${MAX_EXTERNAL_ID} characters`, params: { type: 'value_error' } });
    } else if (DOT_SEGMENTS.includes(v)) {
      ctx.addIssue({ code: 'custom', message: 'must not be "." or ".."', params: { type: 'value_error' } });
    }
  })
  .meta({
    type: 'string',
    minLength: 1,
    maxLength: MAX_EXTERNAL_ID,
    not: { enum: [...DOT_SEGMENTS] },
    description:
      'The platform\'s own id of the appointment (URL-encoded in the path; 1–255 characters once decoded; not "." or "..", which URLs resolve away)',
  });

/**
 * An appointment's time: a timestamp in (docs/api.md#conventions) from 1970 to 2199, as opening
 * hours' dates: a year PostgreSQL and JavaScript would write differently (past 9999 once its offset
 * is applied, before year 1) is refused here rather than stored wrong.
 */
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(2200, 0, 1);
const appointmentTime = (description: string) =>
  isoTimestamp
    .refine((d) => d.getTime() >= EARLIEST && d.getTime() < LATEST, 'must be from 1970-01-01 to 2199-12-31')
    .meta({ type: 'string', format: 'date-time', maxLength: 40, description });

export const AppointmentPath = z.object({ business_id: idParam, external_id: externalIdParam });

const ExternalRef = z.string().trim().min(1, 'must not be empty').max(MAX_EXTERNAL_ID);

export const PutAppointmentRequest = z
  .object({
    client_id: id.optional().meta({ description: 'Our id of the client; or `client_external_id` (exactly one of the two)' }),
    client_external_id: ExternalRef.optional().meta({
      description: "The platform's id of the client (onboarding's `external_id`)",
    }),
    location_id: id
      .nullable()
      .optional()
      .meta({ description: 'Our id of the location; or `location_external_id`; neither: none' }),
    location_external_id: ExternalRef.nullable().optional(),
    staff_id: id.nullable().optional().meta({ description: 'The staff member seeing the client; optional' }),
    starts_at: appointmentTime('When it starts (1970 to 2199)'),
    ends_at: appointmentTime('When it ends: after `starts_at`'),
    service: z
      .string()
      .trim()
      .max(MAX_SERVICE_NAME)
      .nullable()
      .optional()
      .meta({ description: 'The service booked, as clients read it' }),
    status: Status.optional().meta({
      description:
        'Default `booked` for a new appointment; left out of an update, the status stays (a reply may have confirmed it)',
    }),
    notes: z
      .string()
      .max(MAX_APPOINTMENT_NOTES)
      .nullable()
      .optional()
      .meta({ description: 'For staff; never sent to the client' }),
  })
  .meta({ id: 'PutAppointmentRequest' });

/** Upcoming appointments carried by onboarding (docs/api.md#onboarding): at most this many per request. */
export const MAX_ONBOARD_APPOINTMENTS = 100;

export const OnboardAppointment = PutAppointmentRequest.extend({
  external_id: ExternalRef.meta({ description: "The platform's id of the appointment, as in PUT …/appointments/{external_id}" }),
}).meta({ id: 'OnboardAppointment' });

export const AppointmentListQuery = z.object({
  from: appointmentTime('Appointments starting at or after this instant').optional(),
  to: appointmentTime('Appointments starting before this instant').optional(),
  status: Status.optional(),
  client_id: idParam.optional(),
  location_id: idParam.optional(),
  ...paginationQuery,
});

export const AppointmentReminder = z
  .object({
    message_id: z.number().int(),
    before: z.string().meta({ description: 'The rule it was made for (ISO 8601 duration)' }),
    asks_confirmation: z.boolean(),
    status: z.string().meta({ description: "The reminder message's status (`scheduled`, `sent`, `canceled`…)" }),
    send_at: timestampOut.nullable(),
    for_starts_at: timestampOut.meta({ description: 'The appointment start it was written for' }),
  })
  .meta({ id: 'AppointmentReminder' });

const ReviewChannel = z.enum(REVIEW_REQUEST_CHANNELS).meta({ id: 'ReviewRequestChannel' });

export const AppointmentReviewRequest = z
  .object({
    message_id: z.number().int(),
    channel: ReviewChannel,
    status: z.string().meta({ description: "The request message's status (`scheduled`, `sent`, `failed`, `canceled`…)" }),
    send_at: timestampOut.nullable(),
    error_code: z.string().nullable().meta({ description: 'Why it failed or was canceled (`no_marketing_consent`…)' }),
  })
  .meta({ id: 'AppointmentReviewRequest' });

export const Appointment = z
  .object({
    appointment_id: z.number().int(),
    business_id: z.number().int(),
    external_id: z.string(),
    client_id: z.number().int(),
    location_id: z.number().int().nullable(),
    staff_id: z.number().int().nullable(),
    starts_at: timestampOut,
    ends_at: timestampOut,
    service: z.string().nullable(),
    status: Status,
    notes: z.string().nullable(),
    reminders: z
      .array(AppointmentReminder)
      .max(MAX_LISTED_REMINDERS)
      .meta({
        description: `Its reminders, oldest first, canceled ones included: at most ${MAX_LISTED_REMINDERS}, those pending or gone before those a change canceled`,
      }),
    reminders_truncated: z.boolean().meta({ description: `Some reminders were left out (more than ${MAX_LISTED_REMINDERS})` }),
    review_request: AppointmentReviewRequest.nullable().meta({
      description: 'Its latest review request (docs: Review requests); null: none was written',
    }),
    created_at: timestampOut,
    updated_at: timestampOut,
  })
  .meta({ id: 'Appointment' });

export const PaginatedAppointments = z
  .object({
    appointments: z.array(Appointment),
    total_appointments: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
    next_page: z.boolean(),
  })
  .meta({ id: 'PaginatedAppointments' });

// ─── Reminder rules ────────────────────────────────────────────────────────────────────────────────

const listed = (variables: readonly string[]) => variables.map((v) => `{${v}}`).join(', ');

const Before = z
  .string()
  .max(MAX_DURATION_LENGTH)
  .regex(DURATION_PATTERN, 'must be an ISO 8601 duration in days, hours and minutes, e.g. P2D, PT2H, P1DT12H')
  .superRefine((v, ctx) => {
    if (!DURATION_PATTERN.test(v)) return; // the pattern's own issue says it
    const seconds = durationSeconds(v);
    if (seconds === null) ctx.addIssue({ code: 'custom', message: 'must name a duration, e.g. P2D or PT2H' });
    else if (seconds < MIN_REMINDER_BEFORE_SECONDS || seconds > MAX_REMINDER_BEFORE_SECONDS) {
      ctx.addIssue({ code: 'custom', message: 'must be from PT15M to P30D' });
    }
  })
  .meta({ description: 'How long before the appointment: an ISO 8601 duration from PT15M to P30D (days, hours, minutes)' });

/** A text with `{variable}`s (a reminder's or a review request's): any other `{name}` is a 422 naming it. */
const templateText = (variables: readonly AppointmentVariable[]) =>
  z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(MAX_REMINDER_TEXT)
    .superRefine((text, ctx) => {
      const unknown = unknownReminderVariables(text, variables);
      if (unknown.length) {
        ctx.addIssue({
          code: 'custom',
          message: `${unknown.map((v) => `{${v}}`).join(', ')} ${unknown.length > 1 ? 'are' : 'is'} not a variable (the variables: ${listed(variables)})`,
        });
      }
    });

const RuleText = templateText(REMINDER_VARIABLES).meta({
  description: `The reminder's text, with ${listed(REMINDER_VARIABLES)}`,
});

export const ReminderRuleInput = z
  .object({
    before: Before,
    text: RuleText.optional(),
    saved_reply_id: id.optional().meta({ description: 'A saved reply (SMS or any channel) instead of `text`' }),
    asks_confirmation: z.boolean().default(false).meta({ default: false }),
  })
  .meta({ id: 'ReminderRuleInput', description: 'Exactly one of `text` and `saved_reply_id`' });

export const ReminderRules = z.object({ rules: z.array(ReminderRuleInput).max(MAX_REMINDER_RULES) }).meta({
  id: 'ReminderRulesRequest',
  description: `At most ${MAX_REMINDER_RULES} rules, each \`before\` once; \`[]\`: no reminders`,
});

export const ReminderRule = z
  .object({
    before: z.string(),
    text: z.string().nullable(),
    saved_reply_id: z.number().int().nullable(),
    asks_confirmation: z.boolean(),
  })
  .meta({ id: 'ReminderRule' });

/** The business's rules, and what a reply asking to cancel does (docs/api.md#replies-to-reminders). */
export const BusinessReminderRules = ReminderRules.extend({
  cancel_on_request: z.boolean().optional().meta({
    description:
      "A client's reply asking to cancel cancels the appointment at once; absent: unchanged (default false: staff decide)",
  }),
}).meta({ id: 'BusinessReminderRulesRequest' });

export const ReminderRulesResponse = z
  .object({
    business_id: z.number().int(),
    cancel_on_request: z.boolean().meta({
      description: "A client's reply asking to cancel cancels the appointment at once (default false: flagged for staff)",
    }),
    rules: z.array(ReminderRule).meta({ description: "The business's rules (the defaults until it sets its own)" }),
    source: z.enum(['business', 'default']),
    default_rules: z.array(ReminderRule),
    locations: z.array(
      z.object({
        location_id: z.number().int(),
        rules: z.array(ReminderRule).nullable().meta({ description: "The location's own; null: the business's" }),
      }),
    ),
  })
  .meta({ id: 'ReminderRulesResponse' });

export const LocationReminderRulesPath = z.object({ business_id: idParam, location_id: idParam });

// ─── Review requests ───────────────────────────────────────────────────────────────────────────────

const ReviewLink = z
  .string()
  .trim()
  .max(MAX_REVIEW_LINK)
  .pipe(z.url({ protocol: /^https$/, error: 'must be an https URL' }))
  .meta({ description: 'The business’s review page: an https URL' });

const ReviewText = templateText(REVIEW_REQUEST_VARIABLES).superRefine((text, ctx) => {
  if (!namesVariable(text, 'review_link')) ctx.addIssue({ code: 'custom', message: 'must contain {review_link}' });
});

const int = (min: number, max: number) => z.number().int().min(min).max(max);

/** PUT …/review-requests: fields left out keep their value (docs/api.md#review-requests). */
export const ReviewRequestSettingsRequest = z
  .object({
    enabled: z.boolean().optional().meta({ description: 'Send review requests (default false). True needs a `review_link`.' }),
    review_link: ReviewLink.nullable().optional(),
    delay_minutes: int(MIN_REVIEW_DELAY_MINUTES, MAX_REVIEW_DELAY_MINUTES)
      .optional()
      .meta({ description: 'Minutes after the appointment is marked completed (default 120), held by quiet hours for texts' }),
    channel: ReviewChannel.optional().meta({
      description:
        'Preferred channel (default `sms`): the other one when the client cannot be reached on it (no address, opted out, or no marketing consent there while the other has it)',
    }),
    cooldown_days: int(MIN_REVIEW_COOLDOWN_DAYS, MAX_REVIEW_COOLDOWN_DAYS)
      .optional()
      .meta({ description: 'At most one request per client within this many days (default 90)' }),
    text: ReviewText.nullable()
      .optional()
      .meta({
        description: `The words, with ${listed(REVIEW_REQUEST_VARIABLES)}; must contain {review_link}. null: the default`,
      }),
  })
  .meta({ id: 'ReviewRequestSettingsRequest' });

export const ReviewRequestSettingsResponse = z
  .object({
    business_id: z.number().int(),
    enabled: z.boolean(),
    review_link: z.string().nullable(),
    delay_minutes: z.number().int(),
    channel: ReviewChannel,
    cooldown_days: z.number().int(),
    text: z.string().meta({ description: 'The words sent (the default until the business sets its own)' }),
    default_text: z.string().meta({ example: DEFAULT_REVIEW_TEXT }),
    email_subject: z.string().meta({ description: 'An emailed request’s subject', example: REVIEW_EMAIL_SUBJECT }),
  })
  .meta({ id: 'ReviewRequestSettings' });
