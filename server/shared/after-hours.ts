import { fillPlaceholders, unknownPlaceholders } from './text-variables';

/**
 * The after-hours answer's text (docs/api.md#after-hours-answer): `{variable}` placeholders from a
 * fixed list, and how `{next_opening}` reads in the business's locale. Pure and browser-safe (Intl
 * only): the server renders the answer with it and validates the setting, the settings page
 * previews it.
 */

/** The variables an after-hours answer may use, in the order the docs and the settings page list them. */
export const AFTER_HOURS_VARIABLES = ['business_name', 'location_name', 'next_opening'] as const;
export type AfterHoursVariable = (typeof AFTER_HOURS_VARIABLES)[number];

/** The longest answer a business or location may set: one SMS body (docs/api.md#limits). */
export const MAX_AFTER_HOURS_REPLY = 1600;
/** The locale a business that has set none renders `{next_opening}` in. */
export const DEFAULT_LOCALE = 'en-US';
/** A BCP 47 tag is short; this bounds what is handed to Intl. */
export const MAX_LOCALE_LENGTH = 35;
/** Further ahead than this, `{next_opening}` names the date too: "Tuesday" alone would read as this week's. */
const DATE_AFTER_MS = 6 * 86_400_000;

/** Placeholder names in a text that are no variable, each once, in order: refused at save time. */
export const unknownAfterHoursVariables = (text: string): string[] => unknownPlaceholders(text, AFTER_HOURS_VARIABLES);

/** The locale as Intl canonicalises it (`EN-us` → `en-US`), or null when it is not a BCP 47 tag Intl accepts. */
export function canonicalLocale(tag: string): string | null {
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? null;
  } catch {
    return null;
  }
}

/**
 * A moment as a client reads it, on the location's clock in the business's locale: the weekday
 * and time ("Tuesday 9:00 AM" in en-US, "Dienstag 09:00" in de-DE), and with `withDate` the date
 * too ("Tuesday, December 1 3:00 PM"). Two formats joined, not one: a single format puts the
 * locale's "at" between date and time.
 */
export function formatMoment(at: Date, timeZone: string, locale: string, withDate: boolean): string {
  const tag = canonicalLocale(locale) ?? DEFAULT_LOCALE;
  const day = new Intl.DateTimeFormat(tag, { timeZone, weekday: 'long', ...(withDate ? { day: 'numeric', month: 'long' } : {}) });
  const time = new Intl.DateTimeFormat(tag, { timeZone, hour: 'numeric', minute: '2-digit' });
  return `${day.format(at)} ${time.format(at)}`;
}

/** An opening as a client reads it (formatMoment), with the date when it is more than six days from `now`. */
export const formatOpening = (opening: Date, now: Date, timeZone: string, locale: string): string =>
  formatMoment(opening, timeZone, locale, opening.getTime() - now.getTime() > DATE_AFTER_MS);

export type AfterHoursContext = {
  businessName: string;
  locationName: string | null;
  /** The next opening, or null when none is ahead. */
  nextOpening: Date | null;
  timeZone: string;
  locale: string;
  now: Date;
};

/**
 * The answer with its variables replaced; null when it names `{next_opening}` and none is ahead
 * (an answer saying nothing about when is better not sent). `{location_name}` without a location
 * is the business's name. Unknown placeholders cannot be stored; any left stay as written.
 */
export function renderAfterHoursReply(template: string, context: AfterHoursContext): string | null {
  const rendered = fillPlaceholders<AfterHoursVariable>(template, {
    business_name: context.businessName,
    location_name: context.locationName ?? context.businessName,
    next_opening: context.nextOpening && formatOpening(context.nextOpening, context.now, context.timeZone, context.locale),
  });
  return 'text' in rendered ? rendered.text : null;
}
