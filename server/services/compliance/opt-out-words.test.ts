import { describe, expect, it } from 'vitest';
import type { KeywordClass } from '@/server/shared/inbound-keywords';
import { classifyInbound, normalizeForKeywords, RULE_WORDS, twilioConfirmsItself } from './opt-out-words';

/** Real-world replies to a business's texts, English and Spanish, with the class each must get. */
const TABLE: [body: string, expected: KeywordClass][] = [
  // The rule words alone, in the spellings people send.
  ['STOP', 'opt_out'],
  ['stop', 'opt_out'],
  [' Stop ', 'opt_out'],
  ['STOP.', 'opt_out'],
  ['Stop!', 'opt_out'],
  ['STOPPPP', 'opt_out'],
  ['ＳＴＯＰ', 'opt_out'],
  ['Stop 🛑', 'opt_out'],
  ['QUIT', 'opt_out'],
  ['End', 'opt_out'],
  ['END.', 'opt_out'],
  ['revoke', 'opt_out'],
  ['OPT OUT', 'opt_out'],
  ['opt-out', 'opt_out'],
  ['Opt out.', 'opt_out'],
  ['OPTOUT', 'opt_out'],
  ['Cancel', 'opt_out'],
  ['UNSUBSCRIBE!!', 'opt_out'],
  ['Unsubscribe', 'opt_out'],
  ['STOPALL', 'opt_out'],
  ['stop all', 'opt_out'],
  // A rule word leading a short message about the texts.
  ['Stop texting me', 'opt_out'],
  ['STOP TEXTING ME!!!', 'opt_out'],
  ['Stop texting me please', 'opt_out'],
  ['stop sending me these messages', 'opt_out'],
  ['Stop it', 'opt_out'],
  ['STOP STOP STOP', 'opt_out'],
  ['Stop. Wrong number', 'opt_out'],
  ['STOP por favor', 'opt_out'],
  ['Quit texting me', 'opt_out'],
  ['opt-out please', 'opt_out'],
  ['opt out of all texts please', 'opt_out'],
  ['Unsubscribe me from this list', 'opt_out'],
  ['unsubscribe John Smith', 'opt_out'],
  ['Cancel all texts', 'opt_out'],
  ['cancel my reminders', 'opt_out'],
  ['Revoke consent', 'opt_out'],
  // Opt-in and help, whole message only.
  ['START', 'opt_in'],
  ['Unstop', 'opt_in'],
  ['yes', 'opt_in'],
  ['Yes!', 'opt_in'],
  ['HELP', 'help'],
  ['help?', 'help'],
  ['Info', 'help'],
  // Likely revocations: flagged for staff, not acted on.
  ['please stop texting me', 'likely_opt_out'],
  ['Please stop', 'likely_opt_out'],
  ['Can you stop texting me', 'likely_opt_out'],
  ["don't text me", 'likely_opt_out'],
  ['Do not contact me again', 'likely_opt_out'],
  ['never text me again', 'likely_opt_out'],
  ['remove me from your list', 'likely_opt_out'],
  ['Take me off your list', 'likely_opt_out'],
  ['Please delete my number', 'likely_opt_out'],
  ['I want to opt out', 'likely_opt_out'],
  ['how do I unsubscribe?', 'likely_opt_out'],
  ['no more texts please', 'likely_opt_out'],
  ["I don't want these messages", 'likely_opt_out'],
  ['Please cancel the text reminders', 'likely_opt_out'],
  ['Leave me alone', 'likely_opt_out'],
  ['wrong number', 'likely_opt_out'],
  ['cancel please', 'likely_opt_out'],
  ['STOP. Who is this?', 'likely_opt_out'],
  ['Stop texting me, I never signed up for this', 'likely_opt_out'],
  ['no más', 'likely_opt_out'],
  ['No mas mensajes', 'likely_opt_out'],
  ['no me envíen más mensajes', 'likely_opt_out'],
  ['No me escriban', 'likely_opt_out'],
  ['basta', 'likely_opt_out'],
  ['Ya basta!', 'likely_opt_out'],
  ['Dejen de enviarme mensajes', 'likely_opt_out'],
  ['Sáquenme de su lista', 'likely_opt_out'],
  ['borren mi número por favor', 'likely_opt_out'],
  ['Ya no quiero recibir mensajes', 'likely_opt_out'],
  ['Quiero darme de baja', 'likely_opt_out'],
  ['ALTO', 'likely_opt_out'],
  ['cancelar suscripción', 'likely_opt_out'],
  ['número equivocado', 'likely_opt_out'],
  // Not opt-outs.
  ["I can't stop by today", 'none'],
  ['the bus stop', 'none'],
  ["don't cancel my appointment", 'none'],
  ['can we end at 5?', 'none'],
  ['cancel my appointment', 'none'],
  ['Cancel my appt for tomorrow', 'none'],
  ['Stop by at 3?', 'none'],
  ['I quit my job so I can come anytime', 'none'],
  ['End of the day works for me', 'none'],
  ['Please stop by after 5', 'none'],
  ["Please don't stop texting me reminders", 'none'],
  ['STOP PLEASE is what my kid yelled lol', 'none'],
  ['Can I move to Thursday?', 'none'],
  ['Yes please', 'none'],
  ['I need help with my booking', 'none'],
  ['no más de 20 minutos por favor', 'none'],
  ['Gracias, nos vemos mañana', 'none'],
  ['Para mañana a las 3?', 'none'],
  ['', 'none'],
  ['👍', 'none'],
];

describe('classifyInbound: the phrasing table', () => {
  it('has at least 40 phrasings, English and Spanish, every class represented', () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(40);
    const classes = new Set(TABLE.map(([, c]) => c));
    expect([...classes].sort()).toEqual(['help', 'likely_opt_out', 'none', 'opt_in', 'opt_out']);
  });

  it.each(TABLE)('%j → %s', (body, expected) => {
    expect(classifyInbound(body).class).toBe(expected);
  });

  it('every FCC rule word opts out alone, in any case, with punctuation, and leading "… texting me"', () => {
    for (const word of RULE_WORDS) {
      for (const body of [word, word.toUpperCase(), `${word}.`, `${word}!!`, word.replace(' ', '-'), `${word} texting me`]) {
        expect(classifyInbound(body), body).toMatchObject({ class: 'opt_out' });
      }
    }
  });

  it('names what matched', () => {
    expect(classifyInbound('Stop texting me')).toEqual({ class: 'opt_out', match: 'stop' });
    expect(classifyInbound('opt-out please')).toEqual({ class: 'opt_out', match: 'opt out' });
    expect(classifyInbound('no me envíen más mensajes')).toEqual({ class: 'likely_opt_out', match: 'no me envien' });
    expect(classifyInbound('see you then')).toEqual({ class: 'none', match: null });
  });
});

describe('normalizeForKeywords', () => {
  it('folds width, case, accents, apostrophes, punctuation and repeated letters', () => {
    expect(normalizeForKeywords('  ＯＰＴ—Out!! ')).toBe('opt out');
    expect(normalizeForKeywords('No MÁS, por favor…')).toBe('no mas por favor');
    expect(normalizeForKeywords('Don’t   text\nme')).toBe('dont text me');
    expect(normalizeForKeywords('STOPPPP!!!')).toBe('stop');
  });

  it('stays linear on a long hostile body', () => {
    const started = performance.now();
    classifyInbound('stop '.repeat(2_000) + '!'.repeat(10_000) + 'a'.repeat(10_000));
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('twilioConfirmsItself', () => {
  it('is true only for the bare keywords Twilio handles itself', () => {
    for (const body of ['STOP', ' stop ', 'Unsubscribe', 'OPTOUT', 'revoke']) expect(twilioConfirmsItself(body), body).toBe(true);
    for (const body of ['Stop texting me', 'opt-out', 'OPT OUT', 'STOP.', 'HELP'])
      expect(twilioConfirmsItself(body), body).toBe(false);
  });
});
