import { describe, expect, it } from 'vitest';
// The test reads replies as the product will: the texting rules first. server/shared may not import
// server code because it is bundled for the browser; this test is not.
// eslint-disable-next-line @typescript-eslint/no-restricted-imports
import { classifyInbound, RULE_WORDS } from '@/server/services/compliance/opt-out-words';
import { APPOINTMENT_REPLY_WORDS, readAppointmentReply, replyClauses, type AppointmentReplyIntent } from './appointment-replies';

const read = (body: string) => readAppointmentReply(body, classifyInbound(body));

/** Replies to "Reply C to confirm, R to reschedule", English and Spanish, with the intent each must get. */
const TABLE: [body: string, expected: AppointmentReplyIntent][] = [
  // Opt-outs by the texting rules come first: never an appointment cancellation.
  ['STOP', 'opt_out'],
  ['stop', 'opt_out'],
  ['Stop.', 'opt_out'],
  ['CANCEL', 'opt_out'],
  ['Cancel', 'opt_out'],
  ['cancel!!', 'opt_out'],
  [' cancel ', 'opt_out'],
  ['unsubscribe', 'opt_out'],
  ['OPT OUT', 'opt_out'],
  ['opt-out', 'opt_out'],
  ['quit', 'opt_out'],
  ['END', 'opt_out'],
  ['revoke', 'opt_out'],
  ['stop texting me', 'opt_out'],
  ['STOP TEXTING ME!!!', 'opt_out'],
  ['cancel my reminders', 'opt_out'],
  ['Cancel all texts', 'opt_out'],
  // Confirm: one letter or word.
  ['C', 'confirm'],
  ['c', 'confirm'],
  ['c.', 'confirm'],
  ['C!', 'confirm'],
  ['cc', 'confirm'],
  ['Y', 'confirm'],
  ['y', 'confirm'],
  ['yes', 'confirm'],
  ['YES', 'confirm'],
  ['Yes!', 'confirm'],
  ['yesss', 'confirm'],
  ['Yeees!!!', 'confirm'],
  ['yep', 'confirm'],
  ['Yup', 'confirm'],
  ['yeah', 'confirm'],
  ['ok', 'confirm'],
  ['OK', 'confirm'],
  ['Okay', 'confirm'],
  ['okk', 'confirm'],
  ['k', 'confirm'],
  ['confirm', 'confirm'],
  ['Confirmed', 'confirm'],
  ['CONFIRMED!', 'confirm'],
  ['confrim', 'confirm'],
  ['comfirm', 'confirm'],
  ['confirmd', 'confirm'],
  ['perfect', 'confirm'],
  ['Sure', 'confirm'],
  ['yse', 'confirm'],
  // Confirm: emoji, with and without variation selectors and skin tones.
  ['👍', 'confirm'],
  ['👍🏽', 'confirm'],
  ['👍🏻👍🏻', 'confirm'],
  ['👌', 'confirm'],
  ['✅', 'confirm'],
  ['✔️', 'confirm'],
  ['✔', 'confirm'],
  ['🆗', 'confirm'],
  ['ok 👍', 'confirm'],
  ['Yes 😊', 'confirm'],
  // Confirm: phrases.
  ['see you then', 'confirm'],
  ['See you then!', 'confirm'],
  ['See you tomorrow', 'confirm'],
  ['see ya', 'confirm'],
  ["I'll be there", 'confirm'],
  ['Ill be there', 'confirm'],
  ['I will be there!', 'confirm'],
  ["We'll be there", 'confirm'],
  ['sounds good', 'confirm'],
  ['Sounds good, thanks!', 'confirm'],
  ['Yes please', 'confirm'],
  ['yes thank you', 'confirm'],
  ['Ok thanks', 'confirm'],
  ['OK thx', 'confirm'],
  ['C thanks', 'confirm'],
  ['Confirmed, thank you!', 'confirm'],
  ['Yes, see you tomorrow at 3', 'confirm'],
  ['Hi! Yes I confirm', 'confirm'],
  ['Thanks for the reminder, see you then!', 'confirm'],
  ["Can't wait!", 'confirm'],
  ['No problem, see you then', 'confirm'],
  ['I can make it', 'confirm'],
  ['Works for me', 'confirm'],
  ['Great, thanks 🙏', 'confirm'],
  ['All good 👍', 'confirm'],
  ['Liked “Reminder: your appointment at Salon is tomorrow at 3pm. Reply C to confirm, R to reschedule”', 'confirm'],
  // Confirm: Spanish.
  ['sí', 'confirm'],
  ['Si', 'confirm'],
  ['SÍ', 'confirm'],
  ['siii', 'confirm'],
  ['Sí, gracias', 'confirm'],
  ['confirmo', 'confirm'],
  ['Confirmado', 'confirm'],
  ['claro', 'confirm'],
  ['Claro que sí', 'confirm'],
  ['ahí estaré', 'confirm'],
  ['Ahi estare', 'confirm'],
  ['Allí estaré, gracias', 'confirm'],
  ['nos vemos', 'confirm'],
  ['Perfecto, nos vemos mañana', 'confirm'],
  ['vale', 'confirm'],
  ['Dale 👍', 'confirm'],
  ['De acuerdo', 'confirm'],
  ['Sí asistiré', 'confirm'],
  ['Muchas gracias, ahí estaré sin falta', 'confirm'],
  ['¡No puedo esperar!', 'confirm'],
  ['Ok gracias', 'confirm'],
  // Reschedule.
  ['R', 'reschedule'],
  ['r', 'reschedule'],
  ['R.', 'reschedule'],
  ['R please', 'reschedule'],
  ['can we move it', 'reschedule'],
  ['Can we move it?', 'reschedule'],
  ['can we do thursday instead', 'reschedule'],
  ['Can we do Thursday instead?', 'reschedule'],
  ['need to reschedule', 'reschedule'],
  ['I need to reschedule please', 'reschedule'],
  ['reschedule', 'reschedule'],
  ['RESCHEDULE', 'reschedule'],
  ['resceduel', 'reschedule'],
  ['reschedual pls', 'reschedule'],
  ['re-schedule', 'reschedule'],
  ['Is there a different time available?', 'reschedule'],
  ['Can I come at 4 instead?', 'reschedule'],
  ['Could we push it back an hour?', 'reschedule'],
  ['Can I move my appointment to next week', 'reschedule'],
  ['What about Friday?', 'reschedule'],
  ['yes but can we move it', 'reschedule'],
  ['Yes! But can we do another day?', 'reschedule'],
  ["I can't make it, can we reschedule?", 'reschedule'],
  ["Can't make it Tuesday, can we do Wednesday?", 'reschedule'],
  ['Need to change the time', 'reschedule'],
  ['👍 can we move it to 4', 'reschedule'],
  ['reprogramar', 'reschedule'],
  ['Quiero reprogramar', 'reschedule'],
  ['necesito cambiar la cita', 'reschedule'],
  ['¿Podemos cambiar la cita?', 'reschedule'],
  ['otro día por favor', 'reschedule'],
  ['¿Puede ser otro día?', 'reschedule'],
  ['¿Hay otra hora disponible?', 'reschedule'],
  ['Sí pero ¿podemos moverla al viernes?', 'reschedule'],
  ['Mejor el jueves', 'reschedule'],
  // Cannot come.
  ["can't make it", 'cancel'],
  ['Cant make it', 'cancel'],
  ['I cannot come', 'cancel'],
  ['cannot come sorry', 'cancel'],
  ['I need to cancel my appointment', 'cancel'],
  ['cancel my appointment please', 'cancel'],
  ['Cancel my appointment', 'cancel'],
  ['Please cancel my appt', 'cancel'],
  ["I won't make it", 'cancel'],
  ['wont make it tomorrow sorry', 'cancel'],
  ["Sorry, I won't be able to come", 'cancel'],
  ["I'm not going to make it", 'cancel'],
  ['Im not coming', 'cancel'],
  ['I have to cancel', 'cancel'],
  ['I need to cancle', 'cancel'],
  ['No, I cannot make it', 'cancel'],
  ['yes, sorry, I can’t make it after all', 'cancel'],
  ['no puedo ir', 'cancel'],
  ['No puedo ir, lo siento', 'cancel'],
  ['No podré asistir', 'cancel'],
  ['quiero cancelar mi cita', 'cancel'],
  ['cancelar mi cita por favor', 'cancel'],
  ['No voy a poder ir', 'cancel'],
  // A likely opt-out that is also an appointment request (possibleOptOut checked below).
  ['cancel please', 'cancel'],
  ['Cancel it', 'cancel'],
  ['cancelar', 'cancel'],
  // Unclear: no, questions, hedges, negations, long or empty messages.
  ['no', 'unclear'],
  ['No', 'unclear'],
  ['N', 'unclear'],
  ['nope', 'unclear'],
  ['No thanks', 'unclear'],
  ['is it at 3?', 'unclear'],
  ['What time is it?', 'unclear'],
  ['Where are you located?', 'unclear'],
  ['Confirmed?', 'unclear'],
  ['Is my appointment confirmed', 'unclear'],
  ['Yes, what is the address', 'unclear'],
  ['the other day you said 4', 'unclear'],
  ['yes?', 'unclear'],
  ['Who is this', 'unclear'],
  ['maybe', 'unclear'],
  ['I think so', 'unclear'],
  ['Yes hopefully', 'unclear'],
  ["I'll try to be there", 'unclear'],
  ['not sure I can make it', 'unclear'],
  ["I can't confirm yet", 'unclear'],
  ["don't cancel my appointment", 'unclear'],
  ['Ok I will call you', 'unclear'],
  ['👎', 'unclear'],
  ['😢', 'unclear'],
  ['hmm', 'unclear'],
  ['START', 'unclear'],
  ['HELP', 'unclear'],
  ['', 'unclear'],
  ['   ', 'unclear'],
  ['...', 'unclear'],
  ['cancle', 'unclear'],
  ['Disliked “Reminder: Reply C to confirm, R to reschedule”', 'unclear'],
  [
    'Hi, yes I got the reminder, thank you, my daughter has been sick all week and I will let you know how she is doing by tomorrow morning',
    'unclear',
  ],
  ['please stop texting me', 'unclear'],
  ['wrong number', 'unclear'],
  ['¿A qué hora es?', 'unclear'],
  ['no sé', 'unclear'],
  ['quizás', 'unclear'],
  ['Hola', 'unclear'],
  ['gracias', 'unclear'],
];

describe('readAppointmentReply: the phrasing table', () => {
  it('has at least 120 phrasings, every intent represented', () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(120);
    expect([...new Set(TABLE.map(([, i]) => i))].sort()).toEqual(['cancel', 'confirm', 'opt_out', 'reschedule', 'unclear']);
  });

  it.each(TABLE)('%j → %s', (body, expected) => {
    expect(read(body).intent).toBe(expected);
  });
});

describe('readAppointmentReply: the texting rules first', () => {
  it('every FCC rule word alone is an opt-out, in any case and with punctuation, never a cancellation', () => {
    for (const word of RULE_WORDS) {
      for (const body of [word, word.toUpperCase(), `${word[0]!.toUpperCase()}${word.slice(1)}`, `${word}.`, ` ${word}!! `]) {
        expect(read(body), body).toEqual({ intent: 'opt_out', matched: expect.any(String) });
      }
    }
  });

  it('names the texting rules’ keyword for an opt-out', () => {
    expect(read('CANCEL')).toEqual({ intent: 'opt_out', matched: 'cancel' });
    expect(read('stop texting me')).toEqual({ intent: 'opt_out', matched: 'stop' });
  });

  it('a likely opt-out keeps its appointment reading and says so for staff', () => {
    expect(read('cancel please')).toEqual({ intent: 'cancel', matched: 'cancel please', possibleOptOut: 'cancel' });
    expect(read('cancelar')).toEqual({ intent: 'cancel', matched: 'cancelar', possibleOptOut: 'cancelar' });
    expect(read('please stop texting me')).toEqual({ intent: 'unclear', possibleOptOut: 'stop texting' });
    expect(read('wrong number')).toEqual({ intent: 'unclear', possibleOptOut: 'wrong number' });
  });

  it('"yes" confirms (and stays the opt-in keyword it is for the texting rules)', () => {
    expect(classifyInbound('yes').class).toBe('opt_in');
    expect(read('yes')).toEqual({ intent: 'confirm', matched: 'yes' });
  });

  it('uses the classification it is given, whatever the body', () => {
    expect(readAppointmentReply('C', { class: 'opt_out', match: 'stop' })).toEqual({ intent: 'opt_out', matched: 'stop' });
    expect(readAppointmentReply('C', { class: 'none', match: null })).toEqual({ intent: 'confirm', matched: 'c' });
  });
});

describe('readAppointmentReply: what matched', () => {
  it('names the phrase read, spelled right', () => {
    expect(read('C')).toEqual({ intent: 'confirm', matched: 'c' });
    expect(read('See you then!')).toEqual({ intent: 'confirm', matched: 'see you then' });
    expect(read('confrim')).toEqual({ intent: 'confirm', matched: 'confirm' });
    expect(read('👍🏽')).toEqual({ intent: 'confirm', matched: '👍' });
    expect(read('resceduel')).toEqual({ intent: 'reschedule', matched: 'reschedule' });
    expect(read('can we do thursday instead')).toEqual({ intent: 'reschedule', matched: 'can we do thursday' });
    expect(read("can't make it")).toEqual({ intent: 'cancel', matched: 'cant make it' });
    expect(read('is it at 3?')).toEqual({ intent: 'unclear' });
  });

  it('has timeline words for every intent', () => {
    expect(APPOINTMENT_REPLY_WORDS.confirm).toBe('Confirmed by reply');
    for (const [, intent] of TABLE) expect(APPOINTMENT_REPLY_WORDS[intent]).toBeTruthy();
  });
});

describe('readAppointmentReply: invariance', () => {
  const variants = (body: string) => [
    body.toUpperCase(),
    body.toLowerCase(),
    `  ${body}\n`,
    `\t${body} `,
    body.replace(/ /g, '   '),
    /[?!.]$/.test(body) ? body : `${body}!`,
    /[?!.]$/.test(body) ? body : `${body}.`,
    /[?!.]$/.test(body) ? body : `${body}!!!`,
    body.normalize('NFD'),
    body.replace(/\ufe0f/g, ''),
  ];

  it.each(TABLE.filter(([body]) => !/^(?:liked|disliked)/i.test(body)))(
    '%j reads the same in any case, spacing and end punctuation',
    (body, expected) => {
      for (const variant of variants(body)) expect(read(variant).intent, JSON.stringify(variant)).toBe(expected);
    },
  );

  it('accents do not matter: sí = si, ahí estaré = ahi estare, podré = podre', () => {
    for (const [body] of TABLE) {
      const stripped = body.normalize('NFD').replace(/\p{M}/gu, '').normalize('NFC');
      expect(read(stripped).intent, body).toBe(read(body).intent);
    }
  });

  it('letters stretched by three or more read as the word', () => {
    for (const [body, expected] of [
      ['yesssss', 'confirm'],
      ['okkkkk', 'confirm'],
      ['sounds goooood', 'confirm'],
      ['seeee you then', 'confirm'],
      ['Siiiiii', 'confirm'],
      ['noooo', 'unclear'],
    ] as const) {
      expect(read(body).intent, body).toBe(expected);
    }
  });

  it('emoji decorations are ignored', () => {
    expect(replyClauses('👍🏿✔️ ok')).toEqual([['👍', '✔', 'ok']]);
    expect(replyClauses('¡Sí, AHÍ estaré!')).toEqual([['si'], ['ahi', 'estare']]);
    expect(replyClauses("I can't, but THANKS")).toEqual([['i', 'cant'], ['thanks']]);
  });

  it('stays fast on a long hostile body', () => {
    const started = performance.now();
    read('confrim '.repeat(500) + 'x'.repeat(20_000) + ' 👍'.repeat(2_000));
    read('a '.repeat(10_000));
    // Every word a phrase (the check for "only phrases" used to run per phrase, per phrase).
    read('r '.repeat(799) + 'ok');
    // A character NFKC spells as three ((r)): the cap applies to what is read, not what was sent.
    read('⒭'.repeat(1598) + 'ok');
    read('no problem '.repeat(150) + 'yes');
    expect(performance.now() - started).toBeLessThan(500);
  });
});
