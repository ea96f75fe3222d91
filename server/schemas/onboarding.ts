import { isSupportedCountry } from 'libphonenumber-js';
import { z } from 'zod';
import { AssignmentCapacity, AssignmentPolicy } from './assignment';
import { CLIENT_TYPES, ONBOARDING_STATUSES, STAFF_ROLES } from '@/db/schema/enums';
import { AUTO_REPLY_MAX_LENGTH, MAX_SMS_LENGTH } from '@/server/shared/limits';
import { MAX_CONSENTS_PER_CLIENT, OnboardConsent } from './consent';
import { DEFAULT_RECORDING_NOTICE, MAX_RECORDING_NOTICE_LENGTH } from './voice';
import { AfterHoursReplyText, Locale } from './after-hours';
import { MAX_ONBOARD_APPOINTMENTS, OnboardAppointment } from './appointments';
import { OpeningHoursInput } from './opening-hours';
import { SendingWindowInput } from './sending-windows';

/**
 * BusinessOnboardRequest (docs/api.md#onboarding) and the onboarding status answer.
 *
 * Optional fields of the business and of its entries follow one rule on re-onboarding: a field
 * that is omitted keeps its stored value, a field sent as `null` clears it (new entries take the
 * defaults). Phone numbers are checked and normalised by the service, which knows the business's
 * country; everything that does not need the database is checked here.
 */

/** Limits: the 10 MiB body bounds a request long before these do. */
const ONBOARD_LIMITS = { smsNumbers: 50, locations: 1_000, staff: 10_000, clients: 100_000 } as const;

const IANA_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/** A name the runtime's IANA database knows (aliases such as `US/Eastern` included; offsets are not zones). */
function isIanaTimezone(tz: string): boolean {
  if (!IANA_NAME.test(tz)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** `america/new_york` → `America/New_York` (the runtime's canonical spelling). */
function canonicalTimezone(tz: string): string {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return tz;
  }
}

const IanaTimezone = z
  .string()
  .trim()
  .max(64)
  .refine(isIanaTimezone, 'must be an IANA time zone, e.g. America/New_York')
  .overwrite(canonicalTimezone)
  .meta({ description: 'An IANA time zone name', example: 'America/New_York' });

const CountryCode = z
  .string()
  .trim()
  .toUpperCase()
  .max(2)
  .regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code')
  .refine((c) => isSupportedCountry(c), 'is not a known country code')
  .meta({ description: 'ISO 3166-1 alpha-2; default `US` for a new business', example: 'US' });

const ExternalId = z.string().trim().min(1, 'must not be empty').max(255);
const Name = z.string().trim().min(1, 'must not be empty').max(200);
const Text = (max: number) => z.string().trim().max(max).nullish();

const emailFormat = z.email();
/** Lower-cased like every stored address (inbound email matches on lower(email)); `""` reads as none. */
const Email = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .refine((v) => v === '' || emailFormat.safeParse(v).success, 'must be an email address');

/** Any form a person types; normalised to E.164 with the business's country (unparsable → 422). */
const Phone = z.string().max(64).meta({ description: 'Any typed form; stored in E.164 using the business country' });

const OnboardLocation = z
  .object({
    external_id: ExternalId,
    name: Name,
    address: Text(500),
    phone_number: Phone.nullish(),
    timezone: IanaTimezone.nullish(),
    sending_window: SendingWindowInput.nullish().meta({
      description: "The location's own quiet hours window (docs: Quiet hours); null: the business's; omitted: unchanged",
    }),
    opening_hours: OpeningHoursInput.nullish().meta({
      description: "The location's own opening hours (docs: Opening hours); null: the business's; omitted: unchanged",
    }),
    after_hours_reply: AfterHoursReplyText.nullish().meta({
      description:
        "The location's own after-hours answer (docs: After-hours answer); blank: none at this location; null: the business's; omitted: unchanged",
    }),
    assignment_policy: AssignmentPolicy.nullish().meta({
      description: "The location's own auto-assignment policy (docs: Auto-assignment); null: the business's; omitted: unchanged",
    }),
  })
  .meta({ id: 'OnboardLocation' });

/** The fields a staff member and a client share, in the order both list them. */
const personFields = () => ({
  external_id: ExternalId,
  name: Name,
  email: Email.nullish(),
  phone_number: Phone.nullish(),
  gender: Text(50),
  image_url: Text(2048),
});
const locationExternalId = () => ExternalId.nullish().meta({ description: 'A location of this request or one already stored' });

const OnboardStaff = z
  .object({
    ...personFields(),
    role: z.enum(STAFF_ROLES).optional().meta({ description: 'Default `staff` for a new member' }),
    location_external_id: locationExternalId(),
    active: z.boolean().optional().meta({ description: 'Default true for a new member' }),
  })
  .meta({ id: 'OnboardStaff' });

const OnboardClient = z
  .object({
    ...personFields(),
    client_type: z.enum(CLIENT_TYPES).optional().meta({ description: 'Default `new` for a new client' }),
    timezone: IanaTimezone.nullish().meta({
      description: "The client's own time zone: quiet hours keep to it before the number's or the location's (docs: Quiet hours)",
    }),
    location_external_id: locationExternalId(),
    opted_out_sms: z.boolean().optional().meta({
      description:
        "true: the client's number is opted out of texts (docs: Opt-out, source `import`). false or omitted changes nothing: an import never opts anyone back in",
    }),
    opted_out_email: z.boolean().optional().meta({
      description: "true: the client's email address is opted out of email (source `import`); false or omitted changes nothing",
    }),
    consents: z.array(OnboardConsent).max(MAX_CONSENTS_PER_CLIENT).optional().meta({
      description:
        "The client's consent records (docs: Consent), appended to those stored; one identical to a stored record is skipped",
    }),
  })
  .meta({ id: 'OnboardClient' });

const BusinessSettingsInput = z
  .object({
    record_calls: z.boolean().optional(),
    missed_call_text: z.string().trim().max(MAX_SMS_LENGTH).nullish(),
    recording_notice: z
      .string()
      .trim()
      .max(MAX_RECORDING_NOTICE_LENGTH)
      .nullish()
      .meta({
        description: `Spoken to both parties before a recorded call (\`record_calls\`) is connected; null or blank: "${DEFAULT_RECORDING_NOTICE}"`,
      }),
    opt_out_confirmation: z.string().trim().max(AUTO_REPLY_MAX_LENGTH).nullish().meta({
      description:
        'The one text confirming an SMS opt-out (no marketing). null: the default ("<Business>: You\'re unsubscribed and will get no more texts. Reply START to resubscribe."); "": none is sent',
    }),
    help_reply: z.string().trim().max(AUTO_REPLY_MAX_LENGTH).nullish().meta({
      description:
        'The automatic answer to HELP or INFO, at most once per conversation per day. null: the default ("<Business>: for help call <number> or reply here. Reply STOP to opt out. Msg&data rates may apply."); "": no answer',
    }),
    after_hours_reply: AfterHoursReplyText.nullish().meta({
      description:
        'The answer to a client who texts or emails while closed, once per closed period (docs: After-hours answer); variables {business_name}, {location_name}, {next_opening}. null or blank: off (the default)',
    }),
    locale: Locale.optional().meta({
      description: 'How dates and times are written to clients, e.g. `{next_opening}` (BCP 47; default en-US)',
    }),
    assignment_policy: AssignmentPolicy.optional().meta({
      description: 'Auto-assignment (docs: Auto-assignment); default `off`',
    }),
    assignment_capacity: AssignmentCapacity.optional(),
    hand_back_on_away: z.boolean().optional().meta({
      description: 'Going Away hands one’s conversations waiting for a reply back to assignment; default false',
    }),
  })
  .meta({ id: 'BusinessSettings' });

export const BusinessOnboardRequest = z
  .object({
    external_id: ExternalId.optional().meta({
      description: "The platform's business id: onboarding again with the same one updates that business",
    }),
    name: Name,
    timezone: IanaTimezone,
    country: CountryCode.optional(),
    sms_numbers: z
      .array(Phone)
      .max(ONBOARD_LIMITS.smsNumbers)
      .optional()
      .meta({ description: "The business's Twilio numbers; the first is the default sender" }),
    from_email: Email.optional(),
    from_name: Text(200),
    sending_window: SendingWindowInput.optional().meta({
      description:
        "Quiet hours (docs: Quiet hours): the window automated texts keep to in the recipient's local time; default 08:00–21:00",
    }),
    opening_hours: OpeningHoursInput.nullish().meta({
      description:
        'Opening hours (docs: Opening hours): when the business answers its clients, not the sending window. null: none (open around the clock); omitted: unchanged',
    }),
    settings: BusinessSettingsInput.optional(),
    locations: z.array(OnboardLocation).max(ONBOARD_LIMITS.locations).optional(),
    staff: z.array(OnboardStaff).max(ONBOARD_LIMITS.staff).optional(),
    clients: z
      .array(OnboardClient)
      .max(ONBOARD_LIMITS.clients)
      .optional()
      .meta({ description: 'Up to 1,000 are imported before the answer; more are imported by a background job' }),
    appointments: z.array(OnboardAppointment).max(MAX_ONBOARD_APPOINTMENTS).optional().meta({
      description:
        'Upcoming appointments (docs: Appointments), each upserted as by PUT …/appointments/{external_id}, after the clients; not with more than 1,000 clients (those are imported in the background: send the appointments once they are)',
    }),
  })
  .meta({ id: 'BusinessOnboardRequest' });

export type BusinessOnboardInput = z.output<typeof BusinessOnboardRequest>;

const OnboardingStatusValue = z.enum(ONBOARDING_STATUSES).meta({ id: 'OnboardingStatus' });

export const BusinessOnboardResponse = z
  .object({
    business_id: z.number().int(),
    external_id: z.string().nullable(),
    api_key: z
      .string()
      .nullable()
      .meta({ description: 'The business API key: returned once, when the business is created; null later' }),
    onboarding_status: OnboardingStatusValue,
    locations: z.array(z.object({ external_id: z.string(), location_id: z.number().int() })),
    staff: z.array(z.object({ external_id: z.string(), staff_id: z.number().int() })),
    clients: z
      .array(z.object({ external_id: z.string(), client_id: z.number().int() }))
      .meta({ description: 'Empty when the clients are imported in the background (`in_progress`)' }),
    appointments: z.array(z.object({ external_id: z.string(), appointment_id: z.number().int() })),
  })
  .meta({ id: 'BusinessOnboardResponse' });

const OnboardingStepResponse = z
  .object({
    name: z.string().meta({ example: 'clients' }),
    status: OnboardingStatusValue,
    detail: z.string().nullable(),
    done: z.number().int().optional(),
    total: z.number().int().optional(),
  })
  .meta({ id: 'OnboardingStep' });

export const OnboardingStatusResponse = z
  .object({
    business_id: z.number().int(),
    status: OnboardingStatusValue,
    steps: z.array(OnboardingStepResponse),
  })
  .meta({ id: 'BusinessOnboardingStatus' });
