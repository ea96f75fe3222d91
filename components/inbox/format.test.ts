import { describe, expect, it } from 'vitest';
import { dayLabel, describeError, duration, initials, relativeTime, splitMatches, uniqueBy } from './format';

describe('inbox formatting', () => {
  const now = new Date('2026-11-23T15:00:00');

  it('relative times are short, and dates older than a week', () => {
    expect(relativeTime(new Date('2026-11-23T14:59:30').toISOString(), now)).toBe('now');
    expect(relativeTime(new Date('2026-11-23T14:15:00').toISOString(), now)).toBe('45m');
    expect(relativeTime(new Date('2026-11-23T09:00:00').toISOString(), now)).toBe('6h');
    expect(relativeTime(new Date('2026-11-01T09:00:00').toISOString(), now)).toBe('Nov 1');
    expect(relativeTime(new Date('2025-11-01T09:00:00').toISOString(), now)).toBe('Nov 1, 2025');
    expect(relativeTime(null, now)).toBe('');
  });

  it('day separators say Today and Yesterday', () => {
    expect(dayLabel(new Date('2026-11-23T01:00:00').toISOString(), now)).toBe('Today');
    expect(dayLabel(new Date('2026-11-22T23:00:00').toISOString(), now)).toBe('Yesterday');
    expect(dayLabel(new Date('2026-11-02T10:00:00').toISOString(), now)).toBe('Monday, November 2');
  });

  it('initials and durations', () => {
    expect(initials('Ana Maria Lopez')).toBe('AL');
    expect(initials('cher')).toBe('C');
    expect(initials('  ')).toBe('?');
    expect(duration(125)).toBe('2:05');
    expect(duration(null)).toBe('');
  });

  it('splits text around every case-insensitive match, as text (never HTML)', () => {
    expect(splitMatches('Color at 3, colour at 4, COLOR', 'color')).toEqual([
      { text: 'Color', match: true },
      { text: ' at 3, colour at 4, ', match: false },
      { text: 'COLOR', match: true },
    ]);
    expect(splitMatches('<b>bold</b>', 'bold')).toEqual([
      { text: '<b>', match: false },
      { text: 'bold', match: true },
      { text: '</b>', match: false },
    ]);
    expect(splitMatches('short', 'sh')).toEqual([{ text: 'short', match: false }]);
  });

  it('pages fetched by offset while the list re-sorts: each row once, the first copy kept', () => {
    const page1 = [
      { id: 9, v: 'new' },
      { id: 8, v: 'a' },
      { id: 7, v: 'b' },
    ];
    const page2 = [
      { id: 7, v: 'b-again' },
      { id: 6, v: 'c' },
    ]; // shifted by one new row
    expect(uniqueBy([...page1, ...page2], (r) => r.id)).toEqual([...page1, { id: 6, v: 'c' }]);
    expect(uniqueBy([], (r: { id: number }) => r.id)).toEqual([]);
  });
});

describe('describeError', () => {
  it('names each field of a 422 in the form’s words, never the raw JSON; else the message', () => {
    const labels = { send_at: 'Send time', media_ids: 'Pictures' };
    const zod = {
      message: '[{"code":"custom","path":["send_at"]}]',
      data: { zodError: { fieldErrors: { send_at: ['must be in the future'] } } },
    };
    expect(describeError(zod, labels)).toBe('Send time: must be in the future');
    const service = {
      message: 'Validation error',
      data: { issues: [{ loc: ['body', 'messages', 0, 'media_ids', 1], msg: 'Media 9 not found in this business' }] },
    };
    expect(describeError(service, labels)).toBe('Pictures: Media 9 not found in this business');
    expect(describeError({ message: 'Message 4 is sent, not scheduled' }, labels)).toBe('Message 4 is sent, not scheduled');
    expect(describeError(null)).toBeNull();
  });
});
