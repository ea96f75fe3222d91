import type { Classification } from './inbound-keywords';
import { MAX_SMS_LENGTH } from '@/server/shared/limits';

/**
 * How a client's reply to an appointment reminder that asked for confirmation is read
 * (docs/api.md#replies-to-reminders). Pure and browser-safe: no I/O; the texting rules
 * (server/services/compliance/opt-out-words.ts) are applied by the caller and handed in, since
 * server/shared may not import server code, and so that no caller can read a reply without them.
 *
 * Precedence, first that applies:
 * 1. **The texting rules**: an `opt_out` by them ("STOP", "CANCEL", "stop texting me") is an
 *    opt-out and nothing else: never an appointment cancellation.
 * 2. **A change beats a confirmation**: reschedule ("yes but can we move it") beats cancel ("can't
 *    make it, can we do Friday?") beats confirm. A wrong confirmation is the costly mistake (the
 *    business waits for someone who will not come); a wrong request only costs staff a look.
 * 3. **Confirm** only when nothing casts doubt: no question mark, no hedge ("maybe", "I think"), not
 *    negated ("can't confirm"), and short (at most {@link CONFIRM_MAX_WORDS} words). Weak words
 *    (`ok`, `C`, `Y`, `sí`, `vale`) confirm only when the whole message is made of confirmation and
 *    politeness ("ok thanks 👍"); strong ones (`yes`, `confirmed`, 👍, "see you then", "ahí estaré")
 *    anywhere in it.
 * 4. **Unclear** otherwise: questions ("is it at 3?", "is my appointment confirmed"), a bare "no"
 *    (see below), long messages, nothing recognised.
 *
 * A `likely_opt_out` by the texting rules ("cancel please") is read as usual and also carries
 * `possibleOptOut`: staff decide on the opt-out, and the appointment request stands.
 *
 * A bare "no" (`no`, `nope`, `N`) is `unclear`, not `cancel`: after "Reply C to confirm" it may mean
 * "I am not coming", "not yet" or "no, nothing to change", and a business whose setting cancels on
 * request would lose a booking on a guess. Unclear replies are flagged for staff all the same.
 */

export type AppointmentReplyIntent = 'confirm' | 'reschedule' | 'cancel' | 'unclear' | 'opt_out';

type AppointmentReply =
  /** An opt-out by the texting rules: the client is opted out; the appointment stays unconfirmed, flagged for staff. */
  | { intent: 'opt_out'; /** The texting rules' keyword ("stop", "cancel"). */ matched: string }
  | {
      intent: 'confirm' | 'reschedule' | 'cancel';
      /** What was read, normalised and spelled right: "c", "see you then", "cant make it", "👍", "reschedule". */
      matched: string;
      /** A likely opt-out by the texting rules too (their pattern's name): staff decide on it. */
      possibleOptOut?: string;
    }
  | { intent: 'unclear'; possibleOptOut?: string };

/** How the timeline says what a reply did to its appointment. */
export const APPOINTMENT_REPLY_WORDS: Record<AppointmentReplyIntent, string> = {
  confirm: 'Confirmed by reply',
  reschedule: 'Reschedule requested by reply',
  cancel: 'Cancellation requested by reply',
  unclear: 'Reply not understood: for staff',
  opt_out: 'Client opted out; appointment not confirmed',
};

/** Longer than this, a message has more to say than "yes": staff read it. */
const CONFIRM_MAX_WORDS = 15;

// Phrases are written normalised (see `replyClauses`): lower case, no accents, no apostrophes. `(a|b c)`
// is a choice of token runs, `(a|b)?` an optional one; no nesting.

type Intent = 'confirm' | 'reschedule' | 'cancel';
type Kind = Intent | 'filler' | 'hedge';
type Rule = {
  kind: Kind;
  phrases: string[];
  /** Counts only when the whole message is such phrases and filler. */ alone?: boolean;
};

const DAYS =
  '(monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun|tomorrow|today|tonight|next week)';
const DIAS = '(lunes|martes|miercoles|jueves|viernes|sabado|domingo|manana|hoy|la proxima semana)';
const APPT = '(appointment|appt|booking|reservation|visit|session|cita|turno|reserva)';

const RULES: Rule[] = [
  {
    kind: 'confirm',
    alone: true,
    phrases: [
      'c',
      'y',
      'si',
      'ok',
      'okay',
      'okey',
      'okie',
      'oki',
      'k',
      'kk',
      'sure',
      'alright',
      'all right',
      'fine',
      'great',
      'perfect',
      'good',
      'all good',
      'cool',
      'got it',
      'will do',
      'noted',
      'vale',
      'dale',
      'bueno',
      'listo',
      'bien',
      'muy bien',
      'perfecto',
      'de acuerdo',
      'entendido',
      'claro',
    ],
  },
  {
    kind: 'confirm',
    phrases: [
      'yes',
      'yeah',
      'yea',
      'yep',
      'yup',
      '(i|we)? confirm',
      'confirmed',
      'confirming',
      '(i|we)? (will|can|ill|can definitely) be there',
      '(i|we) (will|can|ill|can still) make it',
      'well be there',
      'see you (then|soon|tomorrow|there|at|on|next|later|monday|tuesday|wednesday|thursday|friday|saturday|sunday)',
      'see ya',
      'cya',
      'sounds good',
      'sounds great',
      'sounds perfect',
      'looks good',
      'works for me',
      'that works',
      'count me in',
      'cant wait',
      'no (puedo|podemos) esperar',
      'on my way',
      '👍',
      '👌',
      '✅',
      '✔',
      '☑',
      '🆗',
      'confirmo',
      'confirmado',
      'confirmada',
      'confirmamos',
      'claro que si',
      'si (voy|ire|asistire|puedo|podre|confirmo|claro)',
      '(ahi|alli|alla) (estare|estaremos|nos vemos)',
      'nos vemos',
      'asistire',
      'sin falta',
      'cuente conmigo',
      'cuenten conmigo',
    ],
  },
  {
    kind: 'reschedule',
    alone: true,
    phrases: ['r'],
  },
  {
    kind: 'reschedule',
    phrases: [
      'reschedule',
      'rescheduled',
      'rescheduling',
      'resched',
      're schedule',
      'rebook',
      're book',
      'postpone',
      'push (it|this|my appointment|the appointment|my appt|the appt)? back',
      'move (it|this|that)',
      `move (my|the)? ${APPT}`,
      'can we move',
      'can i move',
      '(another|different|new|later|earlier) (time|day|date|slot)',
      `(another|different|new|later|earlier) ${APPT}`,
      'change it',
      `change (my|the)? (time|date|day|${APPT.slice(1, -1)})`,
      'instead',
      `can (we|i) (do|come|go|make it|switch to|change to) (on|at|in)? ${DAYS}`,
      `(what about|how about) ${DAYS}`,
      '(come|make it|do it|push it|move it) (earlier|later)',
      'reprogramar',
      'reprogramarla',
      'reprogramemos',
      'reprogramo',
      'reagendar',
      'reagendarla',
      'reagendemos',
      'cambiar (la|mi)? (cita|hora|fecha|dia|horario|turno)',
      'cambiarla',
      'cambiar de (dia|hora|fecha|horario)',
      'mover (la|mi)? (cita|turno)',
      'moverla',
      'otro (dia|horario|momento|turno)',
      'otra (hora|fecha|cita)',
      'posponer',
      'posponerla',
      'aplazar',
      'en vez de',
      'en lugar de',
      `(puede ser|podemos hacerlo|podria ser|mejor) (el)? ${DIAS}`,
      'mas (tarde|temprano) (la cita|el turno)?',
    ],
  },
  {
    kind: 'cancel',
    phrases: [
      '(cant|cannot|can not|wont|will not|couldnt|could not) (make it|come|go|attend|be there|come in|do it|make my appointment)',
      '(not|never) (going|gonna|able) to (make it|come|go|attend|be there)',
      '(wont|will not) be able to',
      'unable to (make it|come|attend|be there)',
      'not coming',
      'not going to come',
      'have to miss',
      'need to miss',
      `cancel (my|the|this|it|that|our) ${APPT}?`,
      `cancel ${APPT}`,
      'cancel (please|pls|plz)',
      '(need|have|want|like|going|gonna|got) to cancel',
      'please cancel',
      'pls cancel',
      'cancelar',
      'cancelo',
      'cancela',
      'cancelen',
      'cancelarla',
      'anular',
      'no (puedo|podre|podemos|podremos|voy a poder|vamos a poder) (ir|asistir|llegar|acudir)?',
      'no (voy|vamos) a (ir|asistir|llegar)',
      'no (ire|iremos|asistire|llego|llegare)',
      'no me es posible',
    ],
  },
  {
    kind: 'filler',
    phrases: [
      'thanks',
      'thank you',
      'thanks you',
      'thx',
      'ty',
      'tysm',
      'please',
      'pls',
      'plz',
      'and',
      'so',
      'very',
      'much',
      'a lot',
      'hi',
      'hello',
      'hey',
      'for the reminder',
      'reminder',
      'no problem',
      'no worries',
      'no prob',
      'not a problem',
      'of course',
      'definitely',
      'absolutely',
      'i',
      'we',
      'lol',
      'haha',
      'gracias',
      'muchas gracias',
      'mil gracias',
      'por favor',
      'porfa',
      'hola',
      'buenas',
      'buenos dias',
      'buenas tardes',
      'saludos',
      'por el recordatorio',
      'sin problema',
      'senor',
      'senora',
      '😊',
      '🙂',
      '😀',
      '😃',
      '😄',
      '😁',
      '☺',
      '😉',
      '🤗',
      '🥰',
      '😍',
      '❤',
      '💕',
      '💖',
      '💗',
      '💙',
      '💜',
      '🙏',
      '✨',
      '🙌',
      '👏',
      '💯',
    ],
  },
  {
    kind: 'hedge',
    phrases: [
      'maybe',
      'might',
      'perhaps',
      'probably',
      'possibly',
      'hopefully',
      'hope',
      'try',
      'trying',
      'think',
      'guess',
      'not sure',
      'unsure',
      'if',
      'unless',
      'quizas',
      'quiza',
      'tal vez',
      'talvez',
      'creo',
      'espero',
      'intentare',
      'a lo mejor',
      'no se',
    ],
  },
];

/** Words that negate a phrase they come before (within {@link NEGATION_REACH} words, in the same clause). */
const NEGATIONS = new Set(['not', 'no', 'dont', 'cant', 'cannot', 'wont', 'never', 'didnt', 'doesnt', 'isnt', 'nunca', 'ni']);
const NEGATION_REACH = 3;
/** A clause opening with one of these asks something, question mark or not ("is my appointment confirmed"). */
const QUESTION_WORDS = new Set(
  'is are am do does did what whats when where wheres who whos why how which should could would cuando donde quien cual'.split(
    ' ',
  ),
);
/** Bare refusals: unclear rather than a cancellation (module comment). */
const BARE_NO = new Set(['n', 'no', 'nope', 'nah', 'no thanks', 'no thank you', 'no gracias']);
/** The texting rules' own cancel word, and its misspellings: alone it is an opt-out, never read as an appointment request. */
const BARE_CANCEL = new Set(['cancel', 'cancle', 'cancell', 'cancl', 'cansel', 'canel']);

/** Misspellings too far from the word for the fuzzy match below (more than one edit, or short words). */
const TYPOS = new Map<string, string>(
  Object.entries({
    cancle: 'cancel',
    cancell: 'cancel',
    cansel: 'cancel',
    canceling: 'cancel',
    cancelling: 'cancel',
    resceduel: 'reschedule',
    reschedual: 'reschedule',
    reshedule: 'reschedule',
    rescedule: 'reschedule',
    reschdule: 'reschedule',
    reschedul: 'reschedule',
    reskedule: 'reschedule',
    yse: 'yes',
    yeas: 'yes',
    yas: 'yes',
    ys: 'yes',
    yeh: 'yeah',
    kay: 'okay',
    oky: 'okay',
    ohk: 'ok',
    thnx: 'thanks',
    thanx: 'thanks',
    thnks: 'thanks',
    thks: 'thanks',
    apt: 'appt',
    apointment: 'appointment',
    appoinment: 'appointment',
    appointmnet: 'appointment',
    im: 'i',
    u: 'you',
    tmrw: 'tomorrow',
    tmr: 'tomorrow',
    tomorow: 'tomorrow',
    tommorow: 'tomorrow',
    tommorrow: 'tomorrow',
    gracia: 'gracias',
    grax: 'gracias',
    xfa: 'por favor',
  }),
);
/** Long words a slip of the finger should still reach: one edit (two from ten letters), same first two letters. */
const FUZZY_TARGETS = [
  'confirm',
  'confirmed',
  'confirming',
  'confirmo',
  'confirmado',
  'reschedule',
  'rescheduled',
  'appointment',
  'reprogramar',
  'cancelar',
];

type Phrase = { kind: Kind; alone: boolean; words: string[]; name: string };

/** `(a|b c)? d` → [['a','d'], ['b','c','d'], ['d']]. */
function expand(template: string): string[][] {
  let runs: string[][] = [[]];
  const parts = template.match(/\([^()]*\)\??|[^\s()]+/g) ?? [];
  if (parts.join('').replace(/\s+/g, '') !== template.replace(/\s+/g, ''))
    throw new Error(`Nested choices in phrase ${JSON.stringify(template)}`);
  for (const part of parts) {
    let choices: string[][];
    if (part.startsWith('(')) {
      const optional = part.endsWith('?');
      choices = part
        .slice(1, optional ? -2 : -1)
        .split('|')
        .map((c) => c.split(' ').filter(Boolean));
      if (optional) choices.push([]);
    } else {
      choices = [[part]];
    }
    runs = runs.flatMap((run) => choices.map((c) => [...run, ...c]));
  }
  return runs;
}

const PHRASES: Phrase[] = RULES.flatMap((rule) =>
  rule.phrases.flatMap((template) =>
    expand(template).map((words) => ({ kind: rule.kind, alone: rule.alone ?? false, words, name: words.join(' ') })),
  ),
);
/** The phrases by first word, longest first, so "see you then" is tried before "see ya". */
const BY_FIRST = new Map<string, Phrase[]>();
for (const phrase of [...PHRASES].sort((a, b) => b.words.length - a.words.length)) {
  const list = BY_FIRST.get(phrase.words[0]!) ?? [];
  list.push(phrase);
  BY_FIRST.set(phrase.words[0]!, list);
}
const VOCABULARY = new Set([...PHRASES.flatMap((p) => p.words), ...NEGATIONS, ...TYPOS.values()]);
/** Vocabulary words by their form with every doubled letter single ("yess" → "yes", "okk" → "ok"). */
const BY_SINGLED = new Map([...VOCABULARY].map((w) => [singled(w), w] as const));

function singled(word: string): string {
  return word.replace(/(\p{L})\1+/gu, '$1');
}

/** Optimal string alignment distance, or `limit + 1` as soon as it must exceed `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > limit) return limit + 1;
    prev2 = prev;
    prev = row;
  }
  return prev[b.length]!;
}

/** A word as the phrases spell it: itself, a known misspelling, its doubled letters single, or a near long word. */
function spelled(word: string): string {
  const typo = TYPOS.get(word);
  if (typo) return typo;
  if (VOCABULARY.has(word)) return word;
  const single = BY_SINGLED.get(singled(word));
  if (single) return single;
  if (word.length >= 6 && !/\P{L}/u.test(word)) {
    for (const target of FUZZY_TARGETS) {
      if (!word.startsWith(target.slice(0, 2))) continue;
      if (editDistance(word, target, target.length >= 10 ? 2 : 1) <= (target.length >= 10 ? 2 : 1)) return target;
    }
  }
  return word;
}

const EMOJI = /\p{Extended_Pictographic}/gu;
/** Skin tones, zero-width joiners and variation selectors: 👍🏽 and ✔️ are 👍 and ✔. */
const EMOJI_DECORATION = /[\p{Emoji_Modifier}\u200d\ufe0e\ufe0f]/gu;

/**
 * The message as clauses of words: Unicode NFKC, lower case, accents and emoji decorations stripped,
 * apostrophes dropped (`can't` → `cant`), each emoji a word of its own, clauses split at `.,;:!?` and
 * line breaks and at "but"/"pero", any other punctuation a space, letters repeated three times or
 * more cut to two (then see `spelled`).
 */
export function replyClauses(body: string): string[][] {
  // Cut again after NFKC: one character can become several (⒭ is `(r)`).
  const text = body
    .slice(0, MAX_SMS_LENGTH)
    .normalize('NFKC')
    .slice(0, MAX_SMS_LENGTH)
    .toLowerCase()
    .replace(EMOJI_DECORATION, '')
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .replace(/['`\u00b4\u2018\u2019\u02bc]+/gu, '')
    .replace(EMOJI, ' $& ')
    .replace(/(\p{L})\1{2,}/gu, '$1$1');
  return text
    .split(/[.,;:!?¿¡\n\r…]+|\b(?:but|pero)\b/u)
    .map((clause) =>
      clause
        .replace(/[^\p{L}\p{N}\p{Extended_Pictographic}]+/gu, ' ')
        .trim()
        .split(' ')
        .filter(Boolean)
        .flatMap((w) => spelled(w).split(' ')),
    )
    .filter((clause) => clause.length > 0);
}

type Match = { phrase: Phrase; clause: number; start: number; end: number };

/** Every phrase found, at most one per starting word (the longest). */
function findPhrases(clauses: string[][]): Match[] {
  const found: Match[] = [];
  clauses.forEach((words, clause) => {
    let i = 0;
    while (i < words.length) {
      const phrase = (BY_FIRST.get(words[i]!) ?? []).find((p) => p.words.every((w, k) => words[i + k] === w));
      if (phrase) {
        found.push({ phrase, clause, start: i, end: i + phrase.words.length });
        i += phrase.words.length;
      } else {
        i++;
      }
    }
  });
  return found;
}

/** A negation word shortly before the phrase, in its clause, not part of filler ("no problem"). */
function negated(match: Match, clauses: string[][], inFiller: ReadonlySet<string>): boolean {
  if (NEGATIONS.has(match.phrase.words[0]!)) return false; // "can't make it", "no puedo ir" negate themselves
  const words = clauses[match.clause]!;
  for (let i = Math.max(0, match.start - NEGATION_REACH); i < match.start; i++) {
    if (!NEGATIONS.has(words[i]!)) continue;
    if (inFiller.has(`${match.clause}:${i}`)) continue;
    return true;
  }
  return false;
}

/** Cancelling the texts ("cancel the text reminders") is the texting rules' business, not the appointment's. */
const MESSAGING = new Set([
  'text',
  'texts',
  'message',
  'messages',
  'reminders',
  'notifications',
  'alerts',
  'subscription',
  'mensajes',
  'textos',
]);
const cancelsTexts = (match: Match, clauses: string[][]) =>
  clauses[match.clause]!.slice(match.start).some((w) => MESSAGING.has(w));

/** An iPhone reaction sent as a text: `Liked "Reminder: …"`. The quoted reminder is not the client's words. */
const TAPBACK = /^\s*(liked|loved|emphasized|laughed at|disliked|questioned|reacted (?:👍|❤️?) to)\s*[“"']/iu;

/**
 * Reads a reply to a reminder that asked for confirmation. `consent` is the texting rules' reading of
 * the same body: `classifyInbound(body)` from server/services/compliance/opt-out-words.ts.
 */
export function readAppointmentReply(body: string, consent: Classification): AppointmentReply {
  if (consent.class === 'opt_out') return { intent: 'opt_out', matched: consent.match ?? 'opt out' };
  const possibleOptOut = consent.class === 'likely_opt_out' && consent.match ? { possibleOptOut: consent.match } : {};
  const intent = readIntent(body);
  return intent ? { ...intent, ...possibleOptOut } : { intent: 'unclear', ...possibleOptOut };
}

function readIntent(body: string): { intent: Intent; matched: string } | null {
  const tapback = TAPBACK.exec(body.slice(0, 40));
  if (tapback) {
    const reaction = tapback[1]!.toLowerCase();
    return reaction === 'liked' || reaction === 'loved' || reaction.startsWith('reacted')
      ? { intent: 'confirm', matched: 'liked' }
      : null;
  }
  const clauses = replyClauses(body);
  const words = clauses.flat();
  const text = words.join(' ');
  if (BARE_NO.has(text) || BARE_CANCEL.has(text)) return null;

  const matches = findPhrases(clauses);
  // Each word position covered by filler, so a negation inside "no problem" is found in one look.
  const inFiller = new Set(
    matches
      .filter((m) => m.phrase.kind === 'filler')
      .flatMap((m) => Array.from({ length: m.end - m.start }, (_, k) => `${m.clause}:${m.start + k}`)),
  );
  const live = new Set(matches.filter((m) => !negated(m, clauses, inFiller)));
  const covered = matches.reduce((n, m) => n + m.phrase.words.length, 0);
  /** The whole message is phrases of `kind` and filler: an "alone" phrase counts. Once per kind: linear. */
  const only = new Map<Intent, boolean>();
  const onlyOf = (kind: Intent) => {
    let answer = only.get(kind);
    if (answer === undefined) {
      answer =
        covered === words.length && matches.every((m) => m.phrase.kind === 'filler' || (m.phrase.kind === kind && live.has(m)));
      only.set(kind, answer);
    }
    return answer;
  };
  const first = (kind: Intent) => matches.find((m) => live.has(m) && m.phrase.kind === kind && (!m.phrase.alone || onlyOf(kind)));

  const reschedule = first('reschedule');
  if (reschedule) return { intent: 'reschedule', matched: reschedule.phrase.name };
  const cancel = first('cancel');
  if (cancel && !cancelsTexts(cancel, clauses)) return { intent: 'cancel', matched: cancel.phrase.name };

  const doubt =
    /[?¿]/.test(body) ||
    clauses.some((clause) => QUESTION_WORDS.has(clause[0]!)) ||
    words.length > CONFIRM_MAX_WORDS ||
    matches.some((m) => m.phrase.kind === 'hedge') ||
    matches.some((m) => m.phrase.kind === 'confirm' && !live.has(m));
  const confirm = first('confirm');
  if (confirm && !doubt) return { intent: 'confirm', matched: confirm.phrase.name };
  return null;
}
