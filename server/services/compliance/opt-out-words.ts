import type { Classification } from '@/server/shared/inbound-keywords';
import { MAX_SMS_LENGTH } from '@/server/shared/limits';

/**
 * What an inbound text says about the client's consent to be texted (docs/api.md#opt-out-wording).
 * Pure: no database, no I/O.
 *
 * Since 11 April 2025 the FCC's revocation rule (47 CFR 64.1200(a)(10)) treats `stop`, `quit`,
 * `end`, `revoke`, `opt out`, `cancel` and `unsubscribe` sent by themselves as a revocation of
 * consent, and any other wording a reasonable person reads as one must be honoured too. Hence two
 * tiers:
 *
 * - `opt_out`: acted on at once, like STOP always was. One of the rule words (or the STOPALL /
 *   OPTOUT forms carriers also know) alone, or leading a short message whose other words only say
 *   what to stop ("Stop texting me", "opt-out please", "UNSUBSCRIBE!!").
 * - `likely_opt_out`: other wording that probably revokes consent, in English and Spanish ("please
 *   stop texting me", "no más mensajes", "remove me from your list"). Not acted on automatically
 *   (a wrong guess would silence a client who did not ask for it): the message is flagged for staff.
 *
 * `opt_in` (START, UNSTOP, YES alone) and `help` (HELP, INFO alone) are whole-message keywords.
 */

/** The FCC's seven revocation words (`opt out` in any spelling: opt-out, optout, OPT OUT). */
export const RULE_WORDS = ['stop', 'quit', 'end', 'revoke', 'opt out', 'cancel', 'unsubscribe'] as const;

/**
 * Keywords that opt out alone or leading a short message. `strong` ones mean nothing else in a
 * text to a business, so any short message they lead opts out; `ambiguous` ones are everyday words
 * ("stop by", "end of the day", "cancel my appointment") and opt out only when the rest of the
 * message is about the texts themselves.
 */
const STRONG_OPT_OUT = ['unsubscribe', 'un subscribe', 'opt out', 'optout', 'stopall', 'stop all', 'revoke'] as const;
const AMBIGUOUS_OPT_OUT = ['stop', 'quit', 'end', 'cancel'] as const;
const OPT_OUT_KEYWORDS = [...STRONG_OPT_OUT, ...AMBIGUOUS_OPT_OUT] as const;
const OPT_IN_KEYWORDS = ['start', 'unstop', 'yes'] as const;
const HELP_KEYWORDS = ['help', 'info'] as const;

/**
 * "Short": at most this many words (after normalisation, so `opt-out` is two). Enough for a keyword
 * and what it applies to ("opt out of all texts please", "stop sending me these messages"); a longer
 * text is a sentence with a meaning of its own, in which a leading "Stop" or "End" is more often
 * incidental ("Stop by the shop tomorrow after 3 if you can"), so it goes to the likely patterns.
 */
const SHORT_MESSAGE_WORDS = 6;

/** Words that may follow a leading keyword in an opt-out: what to stop, politeness, emphasis. */
const MESSAGING_WORDS = new Set(
  'text texts texting txt txts txting message messages messaging msg msgs sms mms alert alerts notification notifications reminder reminders subscription promo promos promotion promotions marketing spam mensajes mensaje textos'.split(
    ' ',
  ),
);
const FILLER_WORDS = new Set(
  'me us my please pls plz now all it this that these those them right away immediately asap thanks thank you thx ty from your ur u the to of any more anymore again ever forever permanently already for good ok okay sending send contacting calling bothering spamming wrong number list por favor ya no mas'.split(
    ' ',
  ),
);
const KEYWORD_TOKENS = new Set(OPT_OUT_KEYWORDS.flatMap((k) => k.split(' ')));

/**
 * A leading ambiguous keyword is ordinary speech when followed by one of these words, or when the
 * message names a booking: "cancel my appointment" asks to cancel the appointment, not the texts
 * (a reschedule or cancellation request for staff, class `none`).
 */
const ORDINARY_NEXT: Record<(typeof AMBIGUOUS_OPT_OUT)[number], ReadonlySet<string>> = {
  stop: new Set(['by', 'in', 'at', 'over', 'sign', 'light', 'here', 'there', 'and']),
  end: new Set(['of', 'at', 'by', 'time', 'date', 'up', 'early', 'late']),
  quit: new Set(['job', 'smoking']),
  cancel: new Set([]),
};
const BOOKING_WORDS = new Set(
  'appointment appointments appt appts booking bookings reservation reservations visit order service job meeting session class lesson consultation cleaning call today tomorrow tonight monday tuesday wednesday thursday friday saturday sunday cita citas'.split(
    ' ',
  ),
);

/**
 * Unicode NFKC (full-width and compatibility forms), lower case, accents stripped (`más` → `mas`),
 * apostrophes dropped (`don't` → `dont`), every other run of punctuation, hyphens, emoji and
 * spaces folded to one space (`opt-out` → `opt out`, `STOP.` → `stop`), letters repeated three
 * times or more collapsed (`stoppp` → `stop`), trimmed.
 */
export function normalizeForKeywords(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .replace(/['`\u00b4\u2018\u2019\u02bc]+/gu, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .replace(/(\p{L})\1{2,}/gu, '$1')
    .trim();
}

/** Wording that probably revokes consent, matched anywhere in the normalised text. */
const LIKELY: [name: string, pattern: RegExp][] = [
  // English
  [
    'stop texting',
    /\b(?<!\b(?:dont|do not|not|never) )(?:stop|quit|cease) (?:texting|txting|text|texts|messaging|message|messages|sending|contacting|calling|bothering|spamming|emailing)\b/,
  ],
  ['please stop', /\b(?:please|pls|plz|just) (?:stop|quit|unsubscribe)\b(?! (?:by|in|at|over)\b)/],
  ['unsubscribe', /\b(?:unsubscribe|unsub|un subscribe|optout|opt out|opting out|stopall|revoke|revoking)\b/],
  ['dont text', /\b(?:dont|do not|never) (?:ever )?(?:text|txt|message|msg|contact|sms) (?:me|us|this number|again)\b/],
  ['remove me', /\b(?:remove|delete|erase|lose) (?:me|us|my (?:number|phone|cell|contact|info)|this number)\b/],
  [
    'off the list',
    /\b(?:take (?:me|us|my number|this number) off|(?:off|from) (?:your|the|this|ur) (?:texting |text |mailing |contact )?list)\b/,
  ],
  ['no more texts', /\bno (?:more|longer) (?:text|texts|txts|messages|msgs|sms|reminders|alerts|notifications)\b/],
  [
    'dont want texts',
    /\b(?:dont|do not|no longer) (?:want|need) (?:any |these |your |more |the )?(?:texts|text messages|messages|msgs|txts|sms|reminders|alerts|notifications)\b/,
  ],
  [
    'cancel texts',
    /\bcancel (?:my |the |these |all |your )?(?:text |sms )?(?:texts|messages|alerts|notifications|subscription|reminders)\b/,
  ],
  ['leave me alone', /\bleave me alone\b/],
  ['wrong number', /\b(?:wrong number|numero equivocado)\b/],
  ['spam', /\bspam\b/],
  ['not interested', /\bnot interested\b/],
  // Spanish (accents already stripped: más → mas, envíen → envien)
  ['no mas', /\bno mas\b(?! (?:de|que)\b)/],
  ['basta', /\bbasta\b/],
  [
    'no me envien',
    /\bno (?:me |nos )?(?:envien|envies|envie|enviar|mande|manden|mandes|mandar|escriban|escribas|escriba|escribir|contacten|contactes|contactar|textees|texteen|molesten|molestes)\b/,
  ],
  ['dejen de', /\bdej(?:a|e|en|ar) de (?:enviar|mandar|escribir|textear|contactar|molestar)/],
  ['de la lista', /\b(?:borr|elimin|quit|saq|sac|remuev)[a-z]* (?:mi numero|de (?:la|su|tu|sus|tus|esta) lista)\b/],
  ['no quiero', /\bno (?:quiero|deseo|necesito) (?:recibir )?(?:mas )?(?:mensajes|textos|sms|msjs|notificaciones)\b/],
  ['de baja', /\bde baja\b/],
  ['cancelar', /\bcancelar? (?:la |mi |mis |los )?(?:suscripcion|mensajes|textos)\b/],
];
/** Spanish opt-out words that count only by themselves ("para" is also "for", "alto" "tall"). */
const LIKELY_ALONE = new Set(['alto', 'parar', 'pare', 'para', 'paren', 'cancelar', 'detener', 'baja', 'basta']);

/** `no me envíen` is a likely opt-out when it ends the message or says what (más, mensajes…). */
const NO_ME_ENVIEN_OBJECT = /\b(?:mas|mensajes?|textos?|sms|msjs?)\b/;

/** Classifies an inbound text (see the module comment). */
export function classifyInbound(body: string): Classification {
  // Bounded: an SMS body is at most 1,600 characters; a longer input is not a text to classify.
  const text = normalizeForKeywords(body.slice(0, MAX_SMS_LENGTH));
  if (!text) return { class: 'none', match: null };
  const words = text.split(' ');
  const alone = (list: readonly string[]) => list.find((k) => k === text);

  const optOut = alone(OPT_OUT_KEYWORDS);
  if (optOut) return { class: 'opt_out', match: optOut };
  const optIn = alone(OPT_IN_KEYWORDS);
  if (optIn) return { class: 'opt_in', match: optIn };
  const help = alone(HELP_KEYWORDS);
  if (help) return { class: 'help', match: help };

  let likely: string | null = null;
  if (words.length <= SHORT_MESSAGE_WORDS) {
    const strong = STRONG_OPT_OUT.find((k) => text.startsWith(`${k} `));
    if (strong) return { class: 'opt_out', match: strong };
    const lead = AMBIGUOUS_OPT_OUT.find((k) => words[0] === k);
    if (lead) {
      const rest = words.slice(1);
      const ordinary = ORDINARY_NEXT[lead].has(rest[0]!) || rest.some((w) => BOOKING_WORDS.has(w));
      const aboutTexts = rest.every((w) => MESSAGING_WORDS.has(w) || FILLER_WORDS.has(w) || KEYWORD_TOKENS.has(w));
      // "Cancel" alone is a revocation; "cancel please" after an appointment reminder may well mean
      // the appointment: it opts out only when the rest names the texts.
      const namesTexts = lead !== 'cancel' || rest.some((w) => MESSAGING_WORDS.has(w));
      if (!ordinary && aboutTexts && namesTexts) return { class: 'opt_out', match: lead };
      if (!ordinary) likely = lead;
    }
  }

  for (const [name, pattern] of LIKELY) {
    const m = pattern.exec(text);
    if (!m) continue;
    if (name === 'no me envien' && m.index + m[0].length < text.length && !NO_ME_ENVIEN_OBJECT.test(text)) continue;
    return { class: 'likely_opt_out', match: name };
  }
  if (LIKELY_ALONE.has(text)) return { class: 'likely_opt_out', match: text };
  if (likely) return { class: 'likely_opt_out', match: likely };
  return { class: 'none', match: null };
}

/**
 * Twilio itself handles these keywords on long codes and toll-free numbers when they are the whole
 * message (docs/providers.md#opt-out-keywords): it sends its own confirmation and blocks the pair,
 * so a confirmation of ours would be a second one (and Twilio would refuse it, error 21610).
 */
const TWILIO_OPT_OUT_KEYWORDS = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'REVOKE', 'OPTOUT']);

export function twilioConfirmsItself(body: string): boolean {
  return TWILIO_OPT_OUT_KEYWORDS.has(body.trim().toUpperCase());
}
