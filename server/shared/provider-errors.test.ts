import { describe, expect, it } from 'vitest';
import {
  EMAIL_ERRORS,
  emailErrorMessage,
  enhancedStatus,
  explainEmailError,
  explainTwilioError,
  staffErrorText,
  TWILIO_ERRORS,
  twilioErrorMessage,
} from './provider-errors';

/** The codes docs/providers.md#error-codes-staff-see promises plain words for. */
const TWILIO_CODES = ['21610', '21211', '21614', '30003', '30004', '30005', '30006', '30007', '30008', '30034'];
const EMAIL_CODES = ['5.1.1', '550', '552', '554', '421', '451', 'EAUTH'];

describe('Twilio error codes in plain words', () => {
  it.each(TWILIO_CODES)('%s has a meaning and an action, the code in front', (code) => {
    const e = explainTwilioError(code);
    expect(e?.meaning).toMatch(/^[A-Z].{10,}\.$/);
    expect(e?.action).toMatch(/^[A-Z].{10,}\.$/);
    expect(twilioErrorMessage(code)).toBe(`Twilio error ${code}: ${e!.meaning} ${e!.action}`);
  });

  it('every entry of the table is a full sentence pair', () => {
    for (const [code, e] of Object.entries(TWILIO_ERRORS)) {
      expect(code).toMatch(/^\d{5}$/);
      expect(e.meaning, code).toMatch(/\.$/);
      expect(e.action, code).toMatch(/\.$/);
    }
  });

  it('says what the listed codes mean', () => {
    expect(twilioErrorMessage('21610')).toContain('STOP');
    expect(twilioErrorMessage('21211')).toContain('not a valid phone number');
    expect(twilioErrorMessage('21614')).toContain('not a mobile number');
    expect(twilioErrorMessage('30007')).toContain('spam');
    expect(twilioErrorMessage('30034')).toContain('10DLC');
    expect(twilioErrorMessage(30006)).toContain('landline');
  });

  it('an unknown code falls back to "Twilio error NNNNN", with Twilio\'s own text when given', () => {
    expect(explainTwilioError('30999')).toBeNull();
    expect(twilioErrorMessage('30999')).toBe('Twilio error 30999');
    expect(twilioErrorMessage(20429, 'Too Many Requests')).toBe('Twilio error 20429: Too Many Requests');
    expect(twilioErrorMessage('30999', '  ')).toBe('Twilio error 30999');
    // A known code's plain words replace Twilio's text.
    expect(twilioErrorMessage('21211', "The 'To' number +1 is not a valid phone number.")).toBe(twilioErrorMessage('21211'));
  });

  it('never treats inherited object keys as codes', () => {
    expect(explainTwilioError('constructor')).toBeNull();
    expect(explainTwilioError('__proto__')).toBeNull();
    expect(twilioErrorMessage('toString')).toBe('Twilio error toString');
  });
});

describe('SMTP failures in plain words', () => {
  it.each(EMAIL_CODES)('%s has a meaning and an action', (code) => {
    const e = explainEmailError(code);
    expect(e?.meaning).toMatch(/\.$/);
    expect(e?.action).toMatch(/\.$/);
  });

  it('the enhanced status in the reply is more specific than the reply code', () => {
    expect(explainEmailError('550', '550 5.1.1 <x@y.test>: mailbox unavailable')).toBe(EMAIL_ERRORS['5.1.1']);
    expect(explainEmailError('552', '552 5.2.2 Mailbox full')).toBe(EMAIL_ERRORS['5.2.2']);
    expect(explainEmailError('552', '552 5.3.4 Message size exceeds fixed limit')).toBe(EMAIL_ERRORS['5.3.4']);
    expect(explainEmailError('550', '550 5.7.1 Message rejected as spam')).toBe(EMAIL_ERRORS['5.7.1']);
    // An enhanced status we have no words for: the reply code's.
    expect(explainEmailError('550', '550 5.4.1 Recipient address rejected: Access denied')).toBe(EMAIL_ERRORS['550']);
  });

  it('4xx replies (and 4.x.x statuses) are the temporary failure', () => {
    expect(explainEmailError('421', '421 4.7.0 Try again later')).toBe(EMAIL_ERRORS['4xx']);
    expect(explainEmailError('450')).toBe(EMAIL_ERRORS['4xx']);
    expect(explainEmailError('4.2.2')).toBe(EMAIL_ERRORS['4xx']);
  });

  it('our own codes and unknown ones have no words here (they carry their own text)', () => {
    for (const code of ['invalid_attachment', 'unknown_outcome', 'opted_out', 'ECONNREFUSED', 'dropped', '5.0.0', '', null]) {
      expect(explainEmailError(code), String(code)).toBeNull();
      expect(emailErrorMessage(code, 'whatever')).toBeNull();
    }
  });

  it('formats "Email error <code> <status>: words action Server reply: …"', () => {
    const reply = "Can't send mail - all recipients were rejected: 550 5.1.1 <nobody@bounce.test>: mailbox unavailable";
    const e = EMAIL_ERRORS['5.1.1']!;
    expect(emailErrorMessage('550', reply)).toBe(`Email error 550 5.1.1: ${e.meaning} ${e.action} Server reply: ${reply}`);
    // SendGrid: the status is the code; not repeated.
    expect(emailErrorMessage('5.1.1', '550 5.1.1 No such user')).toBe(
      `Email error 5.1.1: ${e.meaning} ${e.action} Server reply: 550 5.1.1 No such user`,
    );
    expect(emailErrorMessage('554')).toBe(`Email error 554: ${EMAIL_ERRORS['554']!.meaning} ${EMAIL_ERRORS['554']!.action}`);
  });

  it('finds an enhanced status only as a whole x.y.z', () => {
    expect(enhancedStatus('550 5.1.1 user unknown')).toBe('5.1.1');
    expect(enhancedStatus('5.1.10')).toBe('5.1.10');
    expect(enhancedStatus('relay 10.5.1.1 refused')).toBeNull();
    expect(enhancedStatus('version 5.1.1.2')).toBeNull();
    expect(enhancedStatus('status 4.7.0.')).toBe('4.7.0');
    expect(enhancedStatus(null)).toBeNull();
  });
});

describe('staffErrorText (the inbox)', () => {
  it('shows the stored error_message as is', () => {
    expect(staffErrorText('opted_out', 'The client has opted out of SMS (replied STOP); not sent')).toBe(
      'The client has opted out of SMS (replied STOP); not sent',
    );
    expect(staffErrorText('30007', twilioErrorMessage('30007'))).toBe(twilioErrorMessage('30007'));
    expect(staffErrorText('30003', 'Unreachable destination handset')).toBe('Unreachable destination handset');
  });

  it('gives a bare "Twilio error NNNNN" or a missing message the plain words', () => {
    expect(staffErrorText('30034', 'Twilio error 30034')).toBe(twilioErrorMessage('30034'));
    expect(staffErrorText('21614', null)).toBe(twilioErrorMessage('21614'));
    expect(staffErrorText('552', null)).toBe(emailErrorMessage('552'));
  });

  it('falls back to the code, or nothing', () => {
    expect(staffErrorText('30999', 'Twilio error 30999')).toBe('Twilio error 30999');
    expect(staffErrorText('boom', null)).toBe('error boom');
    expect(staffErrorText(null, null)).toBeNull();
  });
});
