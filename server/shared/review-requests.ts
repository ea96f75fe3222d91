/**
 * Review requests after a completed appointment (docs/api.md#review-requests): the settings' bounds
 * and defaults. Pure and browser-safe, shared by the contract (zod, so OpenAPI states them) and the
 * service. There is no rating question and no other link: every client is asked the same way, with
 * the same link (review gating is forbidden by Google's policy and the FTC's 2024 rule).
 */

export const REVIEW_REQUEST_CHANNELS = ['sms', 'email'] as const;
export type ReviewRequestChannel = (typeof REVIEW_REQUEST_CHANNELS)[number];

/** How long after the appointment is marked completed the request goes, in minutes: 15 minutes to 7 days. */
export const MIN_REVIEW_DELAY_MINUTES = 15;
export const MAX_REVIEW_DELAY_MINUTES = 7 * 24 * 60;
export const DEFAULT_REVIEW_DELAY_MINUTES = 120;

/** At most one request per client within this many days: 1 to 730. */
export const MIN_REVIEW_COOLDOWN_DAYS = 1;
export const MAX_REVIEW_COOLDOWN_DAYS = 730;
export const DEFAULT_REVIEW_COOLDOWN_DAYS = 90;

/** The review link's length (an https URL). */
export const MAX_REVIEW_LINK = 500;

/**
 * An appointment marked completed this long after it ended gets no request: a platform loading its
 * past visits (or correcting old ones) asks nobody about a visit long gone.
 */
export const REVIEW_MAX_AGE_DAYS = 7;

/** The default words: a plain ask with the link, the same for everyone. */
export const DEFAULT_REVIEW_TEXT =
  'Thanks for visiting {business_name}! If you have a moment, please leave us a review: {review_link}';

/** An emailed request's subject (its body is the text). */
export const REVIEW_EMAIL_SUBJECT = 'Would you review {business_name}?';

/** The settings as stored in the business's `settings.review_requests` and answered (defaults applied). */
export type ReviewRequestSettings = {
  enabled: boolean;
  review_link: string | null;
  delay_minutes: number;
  channel: ReviewRequestChannel;
  cooldown_days: number;
  /** null: DEFAULT_REVIEW_TEXT. */
  text: string | null;
};

export const DEFAULT_REVIEW_REQUEST_SETTINGS: ReviewRequestSettings = {
  enabled: false,
  review_link: null,
  delay_minutes: DEFAULT_REVIEW_DELAY_MINUTES,
  channel: 'sms',
  cooldown_days: DEFAULT_REVIEW_COOLDOWN_DAYS,
  text: null,
};
