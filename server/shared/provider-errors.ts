/**
 * Provider error codes in plain words, for the staff who read `error_message` in the inbox and the
 * API: what happened, and what to do about it (docs/providers.md#error-codes-staff-see). Pure (no
 * imports), so the server writes these words into `error_message` and the inbox can use them too.
 *
 * The stored text always starts with the provider's code ("Twilio error 30007: …", "Email error
 * 550 5.1.1: …") so support can search for it; the code itself stays in `error_code`.
 */

export type ErrorExplanation = {
  /** What happened, in one sentence a front-desk person understands. */
  meaning: string;
  /** What to do about it. */
  action: string;
};

/** Twilio Messaging error codes (https://www.twilio.com/docs/api/errors), by code. */
export const TWILIO_ERRORS: Readonly<Record<string, ErrorExplanation>> = {
  '20003': {
    meaning: 'Twilio refused our login (the account SID or auth token is wrong).',
    action: 'Ask your administrator to fix the Twilio credentials, then retry.',
  },
  '21211': {
    meaning: "The client's phone number is not a valid phone number.",
    action: 'Check the number with the client (10 digits with a US area code), correct it, and send again.',
  },
  '21606': {
    meaning: "The business's sending number cannot send texts.",
    action: 'Ask your administrator to check the texting number in Twilio.',
  },
  '21610': {
    meaning: 'The client has opted out of texts from this number (they replied STOP).',
    action: 'Do not text them; they can reply START to opt back in. Call or email them instead.',
  },
  '21612': {
    meaning: 'Texts cannot be routed from this business number to this client number.',
    action: 'Check the number with the client, or call or email them instead.',
  },
  '21614': {
    meaning: 'This number cannot receive texts (it is not a mobile number, e.g. a landline).',
    action: 'Call the client instead, or ask them for a mobile number.',
  },
  '30003': {
    meaning: "The client's phone could not be reached (switched off, out of coverage, or unable to take texts).",
    action: 'Try again later, or call the client.',
  },
  '30004': {
    meaning: 'The message was blocked by the client or their carrier.',
    action: 'The client may have blocked this number: call or email them instead.',
  },
  '30005': {
    meaning: 'The number does not exist or is no longer in service.',
    action: 'Check the number with the client and update it.',
  },
  '30006': {
    meaning: "The number is a landline, or the client's carrier cannot take texts.",
    action: 'Call the client instead, or ask them for a mobile number.',
  },
  '30007': {
    meaning: 'The carrier filtered the message as spam.',
    action:
      "Reword it (no link shorteners, all caps or pressure wording) and retry; if it keeps happening, ask your administrator to check the number's registration.",
  },
  '30008': {
    meaning: "The client's carrier reported an unknown error.",
    action: 'Retry later; if it keeps failing, call the client.',
  },
  '30032': {
    meaning: "The business's toll-free number is not verified, so carriers block its texts.",
    action: 'Ask your administrator to finish toll-free verification in Twilio, then retry.',
  },
  '30034': {
    meaning: "The business's texting number is not registered for US A2P 10DLC, so carriers block its texts.",
    action: 'Ask your administrator to finish the A2P 10DLC brand and campaign registration for this number, then retry.',
  },
};

const LOGIN_REFUSED: ErrorExplanation = {
  meaning: 'Our mail server refused the login (the email credentials are wrong, missing or expired).',
  action: 'Ask your administrator to fix the email (SMTP) credentials, then retry.',
};

/**
 * SMTP failures, by enhanced status code (RFC 3463, `5.1.1`), reply code (RFC 5321, `550`), reply
 * class (`4xx`) or nodemailer's credential errors (`EAUTH`…). The most specific key found wins.
 */
export const EMAIL_ERRORS: Readonly<Record<string, ErrorExplanation>> = {
  '5.1.1': {
    meaning: 'The email address does not exist (the receiving server has no such mailbox).',
    action: 'Check the address with the client and correct it.',
  },
  '5.2.2': {
    meaning: "The client's mailbox is full.",
    action: 'Try again in a few days, or call or text the client.',
  },
  '5.3.4': {
    meaning: 'The message is too large for the receiving server.',
    action: 'Remove or shrink the attachments and send again.',
  },
  '5.7.1': {
    meaning: 'The receiving server rejected the message as spam or by its policy.',
    action: 'Check the wording and links, ask the client to add your address to their contacts, or call or text them.',
  },
  '550': {
    meaning: 'The receiving server refused the address (most often, the mailbox does not exist).',
    action: 'Check the address with the client and correct it.',
  },
  '552': {
    meaning: "The client's mailbox is full, or the message is too large for it.",
    action: 'Remove or shrink the attachments and send again; if it still fails, call or text the client.',
  },
  '553': {
    meaning: 'The receiving server says the address is not valid.',
    action: 'Check the address with the client and correct it.',
  },
  '554': {
    meaning: 'The receiving server rejected the message as spam or by its policy.',
    action: 'Check the wording and links, ask the client to add your address to their contacts, or call or text them.',
  },
  '4xx': {
    meaning: 'The receiving server kept deferring the message (a temporary problem: busy, rate limiting or greylisting).',
    action: 'Retry later; if it keeps failing, check the address or call or text the client.',
  },
  EAUTH: LOGIN_REFUSED,
  ENOAUTH: LOGIN_REFUSED,
  EOAUTH2: LOGIN_REFUSED,
};

const clean = (v: string | number | null | undefined): string => (v === null || v === undefined ? '' : String(v).trim());

/** The table's own entry only (a code such as `constructor` is no entry). */
const entry = (table: Readonly<Record<string, ErrorExplanation>>, key: string): ErrorExplanation | null =>
  Object.hasOwn(table, key) ? table[key]! : null;

/** The plain words for a Twilio error code, or null when we have none. */
export function explainTwilioError(code: string | number | null | undefined): ErrorExplanation | null {
  return entry(TWILIO_ERRORS, clean(code));
}

/**
 * `error_message` for a Twilio error: "Twilio error 30007: <meaning> <action>". A code without
 * plain words falls back to "Twilio error NNNNN", followed by Twilio's own text when there is one.
 */
export function twilioErrorMessage(code: string | number, detail?: string | null): string {
  const c = clean(code);
  const known = explainTwilioError(c);
  if (known) return `Twilio error ${c}: ${known.meaning} ${known.action}`;
  const d = clean(detail);
  return d ? `Twilio error ${c}: ${d}` : `Twilio error ${c}`;
}

const ENHANCED_STATUS = /(?:^|[^\d.])([245]\.\d{1,3}\.\d{1,3})(?![\d.]*\d)/;
const REPLY_CODE = /^[245]\d\d$/;

/** The enhanced status code (`5.1.1`) in an SMTP reply or a SendGrid `status`, if any. */
export function enhancedStatus(text: string | null | undefined): string | null {
  return ENHANCED_STATUS.exec(clean(text))?.[1] ?? null;
}

/**
 * The plain words for an email failure: `code` is an SMTP reply code (`550`), an enhanced status
 * (`5.1.1`, as SendGrid reports it) or `EAUTH`; `reply` the server's text, searched for an
 * enhanced status. Null when we have none (our own codes such as `invalid_attachment` carry their
 * own words).
 */
export function explainEmailError(code: string | null | undefined, reply?: string | null): ErrorExplanation | null {
  const c = clean(code);
  const enhanced = enhancedStatus(c) ?? enhancedStatus(reply);
  const specific = (enhanced && entry(EMAIL_ERRORS, enhanced)) || entry(EMAIL_ERRORS, c);
  if (specific) return specific;
  if (REPLY_CODE.test(c) && c.startsWith('4')) return EMAIL_ERRORS['4xx']!;
  // SendGrid reports the enhanced status alone: a class without a listed detail.
  if (enhanced?.startsWith('4.')) return EMAIL_ERRORS['4xx']!;
  return null;
}

/**
 * `error_message` for an email failure we have words for: "Email error 550 5.1.1: <meaning>
 * <action> Server reply: <the server's text>". Null otherwise, so the caller keeps its own text.
 */
export function emailErrorMessage(code: string | null | undefined, reply?: string | null): string | null {
  const known = explainEmailError(code, reply);
  if (!known) return null;
  const c = clean(code);
  const enhanced = enhancedStatus(reply);
  const label = enhanced && enhanced !== c ? `${c} ${enhanced}` : c;
  const r = clean(reply);
  return `Email error ${label}: ${known.meaning} ${known.action}${r ? ` Server reply: ${r}` : ''}`;
}

/**
 * What the inbox shows for a failed message: the stored `error_message`, except a bare
 * "Twilio error NNNNN" (written before the plain words existed) or none at all, which get the plain
 * words when the code has them.
 */
export function staffErrorText(code: string | null | undefined, message: string | null | undefined): string | null {
  const c = clean(code);
  const m = clean(message);
  if (c && explainTwilioError(c) && (!m || m === `Twilio error ${c}`)) return twilioErrorMessage(c);
  if (m) return m;
  if (!c) return null;
  return emailErrorMessage(c) ?? `error ${c}`;
}
