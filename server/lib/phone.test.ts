import { describe, expect, it } from 'vitest';
import { isE164, normalizePhone } from './phone';

describe('normalizePhone', () => {
  it.each([
    ['(415) 555-0123', '+14155550123'],
    ['415.555.0123', '+14155550123'],
    ['415-555-0123', '+14155550123'],
    ['4155550123', '+14155550123'],
    ['1 415 555 0123', '+14155550123'],
    ['+1 (415) 555-0123', '+14155550123'],
    ['  +1 415 555 0123  ', '+14155550123'],
    ['+14155550123', '+14155550123'],
    ['+44 20 7946 0958', '+442079460958'],
    ['011 44 20 7946 0958', '+442079460958'],
    ['00 44 20 7946 0958', '+442079460958'],
    ['0044 20 7946 0958', '+442079460958'],
  ])('%s → %s (default US)', (input, expected) => {
    expect(normalizePhone(input)).toBe(expected);
  });

  it('accepts fictional 555-01xx numbers', () => {
    expect(normalizePhone('+14155550123')).toBe('+14155550123');
    expect(normalizePhone('+12025550199')).toBe('+12025550199');
    expect(normalizePhone('(212) 555-0100')).toBe('+12125550100');
  });

  it('uses the default country for national numbers', () => {
    expect(normalizePhone('020 7946 0958', 'GB')).toBe('+442079460958');
    expect(normalizePhone('00 1 415 555 0123', 'GB')).toBe('+14155550123');
    expect(normalizePhone('030 123456', 'DE')).toBe('+4930123456');
    expect(normalizePhone('020 7946 0958', 'gb')).toBe('+442079460958');
  });

  it.each([
    [''],
    ['   '],
    ['abc'],
    ['call me'],
    ['1-800-FLOWERS'],
    ['415555O123'],
    ['call 415-555-0123 now'],
    ['123'],
    ['555-0123'],
    ['41555501234567'],
    ['+1 415 555 0123 4567'],
    ['+999 123456'],
    ['415-555-0123 ext 12'],
    ['00'],
    ['+'],
    ['1'.repeat(100)],
  ])('rejects %j', (input) => {
    expect(normalizePhone(input)).toBeNull();
  });

  it('returns null for an unknown default country', () => {
    expect(normalizePhone('415 555 0123', 'XX')).toBeNull();
  });
});

describe('isE164', () => {
  it.each(['+14155550123', '+442079460958', '+4930123456', '+123456789012345'])('accepts %s', (s) => {
    expect(isE164(s)).toBe(true);
  });

  it.each(['14155550123', '+04155550123', '+1 415 555 0123', '+1234567890123456', '+', '', '+1415555012a'])('rejects %j', (s) => {
    expect(isE164(s)).toBe(false);
  });
});
