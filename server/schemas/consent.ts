import { z } from 'zod';
import { CONSENT_CHANNELS, CONSENT_PURPOSES, CONSENT_SOURCES, CONSENT_STATUSES } from '@/db/schema/enums';
import { isoTimestamp, timestampOut } from './common';

/** Consent records (docs/api.md#consent): the request and response shapes of REST, tRPC and the onboarding import. */

export const MAX_CONSENT_NOTE_LENGTH = 2000;
/** Consent given before this is not believable, and a record can not be dated in the future. */
const EARLIEST_CONSENT = new Date('2000-01-01T00:00:00Z');
/**
 * Clock skew allowed between the caller and us for `recorded_at`: a time up to this far ahead is
 * stored as now, anything later is refused. A record dated ahead would be the current one until
 * then, outranking every withdrawal made in between, for good (docs/api.md#consent).
 */
export const FUTURE_SKEW_MS = 5_000;

export const ConsentChannel = z.enum(CONSENT_CHANNELS).meta({ id: 'ConsentChannel' });
export const ConsentPurpose = z.enum(CONSENT_PURPOSES).meta({
  id: 'ConsentPurpose',
  description: '`marketing` is what campaigns, marketing and review requests need; `transactional` is kept as a record only',
});
export const ConsentStatus = z.enum(CONSENT_STATUSES).meta({ id: 'ConsentStatus' });
export const ConsentSource = z.enum(CONSENT_SOURCES).meta({ id: 'ConsentSource' });

const recordedAt = isoTimestamp
  .refine((d) => d.getTime() >= EARLIEST_CONSENT.getTime(), 'must be on or after 2000-01-01')
  .refine(
    (d) => d.getTime() <= Date.now() + FUTURE_SKEW_MS,
    `must not be later than now (${FUTURE_SKEW_MS / 1000} s of clock skew are allowed, and stored as now)`,
  );

const consentFields = {
  channel: ConsentChannel,
  purpose: ConsentPurpose,
  status: ConsentStatus,
  note: z
    .string()
    .trim()
    .max(MAX_CONSENT_NOTE_LENGTH)
    .nullish()
    .meta({ description: "Free text: the form's wording, where and how the client said it" }),
  recorded_at: recordedAt.optional().meta({
    description: `When the client gave or withdrew it; default now. Not later than now: up to ${FUTURE_SKEW_MS / 1000} s ahead (clock skew) is stored as now, later is a 422`,
  }),
};

/** REST: a record made over the API (source defaults to `api`). */
export const ConsentRequest = z
  .object({
    ...consentFields,
    source: ConsentSource.default('api').meta({ description: 'How the client gave or withdrew it; default `api`' }),
  })
  .meta({ id: 'ConsentRequest' });
export type ConsentRequest = z.output<typeof ConsentRequest>;

/** Onboarding: a client's consent records (source defaults to `import`). */
export const OnboardConsent = z
  .object({
    ...consentFields,
    source: ConsentSource.default('import').meta({ description: 'Default `import`' }),
  })
  .meta({ id: 'OnboardConsent' });
export const MAX_CONSENTS_PER_CLIENT = 20;

/** Staff in the inbox record what the client told them (source `staff` unless they name another). */
export const StaffConsentRequest = z.object({
  ...consentFields,
  source: ConsentSource.default('staff'),
});

export const ConsentRecord = z
  .object({
    consent_id: z.number().int(),
    client_id: z.number().int(),
    channel: ConsentChannel,
    purpose: ConsentPurpose,
    status: ConsentStatus,
    source: ConsentSource,
    note: z.string().nullable(),
    recorded_at: timestampOut,
    recorded_by_staff_id: z.number().int().nullable(),
    created_at: timestampOut,
  })
  .meta({ id: 'ConsentRecord' });
export type ConsentRecord = z.output<typeof ConsentRecord>;

export const ClientConsents = z
  .object({
    client_id: z.number().int(),
    current: z.array(ConsentRecord).meta({
      description: 'The latest record per channel and purpose (by recorded_at); none: no consent on record',
    }),
    history: z.array(ConsentRecord).meta({ description: 'Every record, newest first' }),
  })
  .meta({ id: 'ClientConsents' });
export type ClientConsents = z.output<typeof ClientConsents>;
