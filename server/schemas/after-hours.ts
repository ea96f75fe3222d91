import { z } from 'zod';
import {
  AFTER_HOURS_VARIABLES,
  canonicalLocale,
  DEFAULT_LOCALE,
  MAX_AFTER_HOURS_REPLY,
  MAX_LOCALE_LENGTH,
  unknownAfterHoursVariables,
} from '@/server/shared/after-hours';

/**
 * The after-hours answer's settings (docs/api.md#after-hours-answer), as onboarding and the inbox
 * take them: the text, its variables checked when it is saved (an unknown `{name}` is a 422 there,
 * not a surprise in a client's phone later), and the business's locale.
 */

const variables = AFTER_HOURS_VARIABLES.map((v) => `{${v}}`).join(', ');

/** An answer's text; trimmed, at most one SMS body, only the known variables. */
export const AfterHoursReplyText = z
  .string()
  .trim()
  .max(MAX_AFTER_HOURS_REPLY)
  .superRefine((text, ctx) => {
    const unknown = unknownAfterHoursVariables(text);
    if (unknown.length) {
      ctx.addIssue({
        code: 'custom',
        message: `${unknown.map((v) => `{${v}}`).join(', ')} ${unknown.length > 1 ? 'are' : 'is'} not a variable (the variables: ${variables})`,
      });
    }
  })
  .meta({ description: `The answer; variables ${variables}` });

/** A BCP 47 language tag Intl knows, in its canonical spelling (`en-us` → `en-US`). */
export const Locale = z
  .string()
  .trim()
  .min(2)
  .max(MAX_LOCALE_LENGTH)
  .refine((tag) => canonicalLocale(tag) !== null, 'must be a BCP 47 language tag, e.g. en-US')
  .overwrite((tag) => canonicalLocale(tag) ?? tag)
  .meta({ description: `A BCP 47 language tag (default ${DEFAULT_LOCALE})`, example: 'en-US' });

/** The inbox's save: the business's answer (`locationId` null) or a location's (null there: the business's). */
export const AfterHoursReplyInput = z.object({
  locationId: z.number().int().positive().nullable(),
  text: AfterHoursReplyText.nullable(),
});
