import { formatMoment } from './after-hours';
import { firstName } from './templates';
import { fillPlaceholders, placeholderNames, unknownPlaceholders } from './text-variables';

/**
 * Appointments and their reminders (docs/api.md#appointments): the statuses, the reminder rules'
 * bounds and defaults, ISO 8601 durations, and a reminder's text with its `{variable}`s. Pure and
 * browser-safe (Intl only): the server renders reminders with it and validates rules; the inbox
 * may preview them.
 */

/** An appointment's status, as the platform (or a reply, or staff) sets it. */
export const APPOINTMENT_STATUSES = ['booked', 'confirmed', 'canceled', 'completed', 'no_show'] as const;
export type AppointmentStatus = (typeof APPOINTMENT_STATUSES)[number];
/** The statuses of an appointment still to come, which its reminders are for. */
export const REMINDED_STATUSES: readonly AppointmentStatus[] = ['booked', 'confirmed'];

/** The platform's id of an appointment, of a location or a client: at most this many characters. */
export const MAX_EXTERNAL_ID = 255;
export const MAX_SERVICE_NAME = 200;
export const MAX_APPOINTMENT_NOTES = 2000;
/**
 * The reminders listed with an appointment (its answer, the inbox's card): an appointment moved
 * again and again gathers canceled ones without end; those still counted for their time come first.
 */
export const MAX_LISTED_REMINDERS = 20;
/** Reminder rules per business (or per location). */
export const MAX_REMINDER_RULES = 5;
/** The nearest and farthest a reminder may be before its appointment, in seconds: 15 minutes, 30 days. */
export const MIN_REMINDER_BEFORE_SECONDS = 15 * 60;
export const MAX_REMINDER_BEFORE_SECONDS = 30 * 86_400;
/** A reminder's text: one SMS body. */
export const MAX_REMINDER_TEXT = 1600;

/** The variables a reminder's text may use, in the order the docs list them. */
export const REMINDER_VARIABLES = [
  'appointment_time',
  'service',
  'staff_first_name',
  'location_name',
  'business_name',
  'client_first_name',
] as const;
/** A review request's text (docs/api.md#review-requests) takes the reminders' variables and the link. */
export const REVIEW_REQUEST_VARIABLES = [...REMINDER_VARIABLES, 'review_link'] as const;
export type AppointmentVariable = (typeof REVIEW_REQUEST_VARIABLES)[number];

/** A reminder rule as stored and answered: `before` an ISO 8601 duration, a text or a saved reply, whether it asks. */
export type ReminderRule = {
  before: string;
  text: string | null;
  saved_reply_id: number | null;
  asks_confirmation: boolean;
};

/**
 * The rules of a business that never set any (docs/api.md#reminder-rules): two days before, asking
 * for confirmation; two hours before, not asking.
 */
export const DEFAULT_REMINDER_RULES: readonly ReminderRule[] = [
  {
    before: 'P2D',
    text: '{business_name}: reminder of your appointment on {appointment_time}. Reply C to confirm, R to reschedule.',
    saved_reply_id: null,
    asks_confirmation: true,
  },
  {
    before: 'PT2H',
    text: '{business_name}: see you at {appointment_time} at {location_name}.',
    saved_reply_id: null,
    asks_confirmation: false,
  },
];

/**
 * The durations a rule's `before` may be written as: days, then hours and minutes (`P2D`, `PT2H`,
 * `P1DT12H`, `PT90M`). Weeks, months and years are not (a month has no fixed length). One pass, no
 * nested quantifiers: linear.
 */
export const DURATION_PATTERN = /^P(?:(\d{1,3})D)?(?:T(?:(\d{1,4})H)?(?:(\d{1,6})M)?)?$/;
export const MAX_DURATION_LENGTH = 20;

/** `P1DT2H` → seconds, or null when it is not a duration of DURATION_PATTERN (or names nothing: `P`, `PT`). */
export function durationSeconds(value: string): number | null {
  const m = DURATION_PATTERN.exec(value);
  if (!m || (m[1] === undefined && m[2] === undefined && m[3] === undefined)) return null;
  if (value.endsWith('T')) return null;
  return Number(m[1] ?? 0) * 86_400 + Number(m[2] ?? 0) * 3600 + Number(m[3] ?? 0) * 60;
}

/** Seconds → the shortest duration of DURATION_PATTERN (`172800` → `P2D`, `5400` → `PT1H30M`). */
export function formatDuration(seconds: number): string {
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const time = `${hours ? `${hours}H` : ''}${minutes ? `${minutes}M` : ''}`;
  return `P${days ? `${days}D` : ''}${time ? `T${time}` : ''}` || 'PT0M';
}

/** The variables a text may use: a reminder's, or a review request's (which adds `{review_link}`). */
type Variables = readonly AppointmentVariable[];

/** Placeholder names in a text that are none of `variables`, each once, in order: refused when the text is saved. */
export const unknownReminderVariables = (text: string, variables: Variables = REMINDER_VARIABLES): string[] =>
  unknownPlaceholders(text, variables);

/** Whether a text names `{variable}` (a review request's text must name `{review_link}`). */
export const namesVariable = (text: string, variable: AppointmentVariable) => placeholderNames(text).includes(variable);

export type ReminderContext = {
  startsAt: Date;
  timeZone: string;
  locale: string;
  service: string | null;
  staffName: string | null;
  locationName: string | null;
  businessName: string;
  clientName: string | null;
  /** A review request's link (docs/api.md#review-requests); a reminder has none. */
  reviewLink?: string | null;
};

/**
 * A reminder's (or a review request's) text with its variables replaced, or the variables that have
 * no value for this appointment (no service, no staff member, a client without a name): such a
 * message is not sent, rather than reach the client with a `{…}` in it. `{appointment_time}` always
 * has its date; `{location_name}` without a location is the business's name. A placeholder that is
 * none of `variables` is left as written.
 */
export function renderReminder(
  template: string,
  c: ReminderContext,
  variables: Variables = REMINDER_VARIABLES,
): { text: string } | { missing: AppointmentVariable[] } {
  const values: Record<AppointmentVariable, string | null> = {
    appointment_time: formatMoment(c.startsAt, c.timeZone, c.locale, true),
    service: c.service?.trim() || null,
    staff_first_name: firstName(c.staffName),
    location_name: c.locationName ?? c.businessName,
    business_name: c.businessName,
    client_first_name: firstName(c.clientName),
    review_link: c.reviewLink ?? null,
  };
  return fillPlaceholders(template, Object.fromEntries(variables.map((v) => [v, values[v]])) as Partial<typeof values>);
}
