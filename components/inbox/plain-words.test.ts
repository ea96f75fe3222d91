import { describe, expect, it } from 'vitest';
import { fromLocalInput } from '@/server/shared/zoned-time';
import { actionLabel, previewWords, retryOffer, textCount, toLocalInput, whenWords } from './plain-words';

describe('conversation previews in words', () => {
  const row = (preview: Parameters<typeof previewWords>[0]['preview']) => ({
    preview,
    last_message_content: 'latest',
    last_updated_channel: 'sms',
  });
  const p = { message_type: 'TEXT', channel: 'sms', direction: 'inbound', status: 'received', content: 'Confirmed, thank you!' };

  it('a note is a note, under no channel', () => {
    expect(
      previewWords(
        row({
          ...p,
          message_type: 'NOTE',
          channel: null,
          direction: 'outbound',
          status: 'sent',
          content: 'Prefers texts after 5pm',
        }),
      ),
    ).toEqual({
      note: true,
      chip: null,
      state: 'Note:',
      text: 'Prefers texts after 5pm',
    });
  });

  it('a waiting text says Scheduled, a failed one Failed; a client’s text is just itself', () => {
    expect(previewWords(row({ ...p, direction: 'outbound', status: 'scheduled', content: 'Reminder' }))).toEqual({
      note: false,
      chip: 'SMS',
      state: 'Scheduled ·',
      text: 'Reminder',
    });
    expect(previewWords(row({ ...p, direction: 'outbound', status: 'failed' })).state).toBe('Failed ·');
    expect(previewWords(row(p))).toEqual({ note: false, chip: 'SMS', state: null, text: 'Confirmed, thank you!' });
    expect(previewWords(row({ ...p, message_type: 'CALL', channel: 'voice', content: null, status: 'no_answer' }))).toEqual({
      note: false,
      chip: 'Call',
      state: null,
      text: 'Incoming call',
    });
    expect(previewWords(row(null))).toEqual({ note: false, chip: 'SMS', state: null, text: 'latest' });
  });
});

describe('the composer’s button', () => {
  // Monday 2026-11-23, 15:00 in New York.
  const now = new Date('2026-11-23T20:00:00Z');
  const base = {
    mode: 'sms' as const,
    busy: false,
    sendAt: null,
    timeZone: 'America/New_York',
    choosingTime: false,
    heldUntil: null,
    heldZone: null,
    now,
  };

  it('says what will happen', () => {
    expect(actionLabel(base)).toBe('Send');
    expect(actionLabel({ ...base, mode: 'email' })).toBe('Send');
    expect(actionLabel({ ...base, mode: 'note' })).toBe('Add note');
    expect(actionLabel({ ...base, sendAt: new Date('2026-11-24T14:00:00Z') })).toBe('Send at Tue 9:00');
    expect(actionLabel({ ...base, sendAt: new Date('2026-11-24T02:30:00Z') })).toBe('Send today at 21:30');
    expect(actionLabel({ ...base, sendAt: new Date('2026-12-03T14:00:00Z') })).toBe('Send at Dec 3 9:00');
    // "Choose a time…" before a time is chosen: never "Send".
    expect(actionLabel({ ...base, choosingTime: true })).toBe('Schedule');
    // Held by the client's quiet hours: when it will go, on their clock.
    expect(actionLabel({ ...base, heldUntil: new Date('2026-11-24T16:00:00Z'), heldZone: 'America/Los_Angeles' })).toBe(
      'Send at Tue 8:00',
    );
    expect(actionLabel({ ...base, busy: true })).toBe('Sending…');
  });

  it('reads days in the given zone, not the browser’s', () => {
    const at = new Date('2026-11-24T16:00:00Z');
    expect(whenWords('America/New_York', at, now)).toBe('at Tue 11:00');
    expect(whenWords('Asia/Tokyo', at, now)).toBe('at Wed 1:00'); // already Tuesday there: tomorrow is Wednesday
    expect(whenWords('Pacific/Honolulu', new Date('2026-11-24T00:30:00Z'), now)).toBe('today at 14:30');
  });
});

describe('a time filled into a field', () => {
  it('is the zone’s clock, and reads back to the same instant', () => {
    const at = new Date('2026-11-24T14:05:00Z');
    expect(toLocalInput('America/Chicago', at)).toBe('2026-11-24T08:05');
    expect(toLocalInput('Asia/Tokyo', at)).toBe('2026-11-24T23:05');
    for (const zone of ['America/Chicago', 'Asia/Tokyo', 'UTC']) expect(fromLocalInput(zone, toLocalInput(zone, at))).toEqual(at);
  });
});

describe('the text counter', () => {
  it('counts texts as they are billed, with the technical detail apart', () => {
    expect(textCount('')).toEqual({ words: '', detail: '', warning: null });
    const one = textCount('See you Friday at 3!');
    expect(one.words).toBe('1 text');
    expect(one.detail).toMatch(/GSM-7: 1 segment/);
    expect(one.warning).toBeNull();
    expect(textCount('a'.repeat(161)).words).toBe('2 texts');
    const emoji = textCount('See you Friday at 3 — reply STOP to opt out');
    expect(emoji.words).toBe('1 text');
    expect(emoji.detail).toMatch(/UCS-2/);
    expect(emoji.warning).toBe('Emoji or special characters: each text holds 70 characters instead of 160');
    expect(textCount('é'.repeat(71)).words).toBe('1 text'); // é is in GSM-7
    expect(textCount('😀'.repeat(36)).words).toBe('2 texts');
    expect(textCount('a'.repeat(200), 2).words).toBe('1 picture message');
    expect(textCount('a'.repeat(1601)).words).toBe('Too long: 1,601 of 1,600 characters');
    for (const t of ['', 'hi', 'a'.repeat(500)]) expect(textCount(t).words).not.toMatch(/segment|GSM|UCS/);
  });
});

describe('Retry', () => {
  const failed = { direction: 'outbound', message_type: 'TEXT', message_status: 'failed', error_code: '30003' };
  it('is offered on a failed or undelivered text or email, and says what it does', () => {
    expect(retryOffer(failed)).toEqual({
      canRetry: true,
      what: expect.stringMatching(/^Retry sends this same text again, once/),
    });
    expect(retryOffer({ ...failed, message_status: 'undelivered' }).canRetry).toBe(true);
    expect(retryOffer({ ...failed, message_type: 'EMAIL' }).what).toMatch(/same email/);
  });
  it('is not offered where it cannot help', () => {
    expect(retryOffer({ ...failed, error_code: 'opted_out' }).canRetry).toBe(false);
    for (const status of ['canceled', 'bounced', 'delivered', 'scheduled'])
      expect(retryOffer({ ...failed, message_status: status }).canRetry, status).toBe(false);
    expect(retryOffer({ ...failed, direction: 'inbound' }).canRetry).toBe(false);
    expect(retryOffer({ ...failed, message_type: 'NOTE' }).canRetry).toBe(false);
  });
});
