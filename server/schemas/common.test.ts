import { describe, expect, it } from 'vitest';
import { id, INT32_MAX, isoTimestamp, parseIsoTimestamp } from './common';

describe('parseIsoTimestamp: ISO 8601 checked against the calendar', () => {
  it.each([
    ['2026-11-20T14:03:05Z', '2026-11-20T14:03:05.000Z'],
    ['2026-11-20T14:03:05.123456789Z', '2026-11-20T14:03:05.123Z'],
    ['2026-11-20 14:03', '2026-11-20T14:03:00.000Z'], // no offset: UTC
    ['2026-11-20T14:03:05+02:00', '2026-11-20T12:03:05.000Z'],
    ['2026-11-20T14:03:05-0530', '2026-11-20T19:33:05.000Z'],
    ['2026-11-20T01:00:00+05', '2026-11-19T20:00:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'], // leap year
    ['2000-02-29T23:59:59z', '2000-02-29T23:59:59.000Z'], // divisible by 400
  ])('%s → %s', (input, expected) => {
    expect(parseIsoTimestamp(input)?.toISOString()).toBe(expected);
  });

  it.each([
    '2026-02-30T10:00:00Z', // no 30 February
    '2025-02-29T10:00:00Z', // not a leap year
    '1900-02-29T10:00:00Z', // divisible by 100, not 400
    '2026-04-31T10:00:00Z',
    '2026-13-01T10:00:00Z',
    '2026-00-10T10:00:00Z',
    '2026-11-20T24:01:00Z',
    '2026-11-20T24:00:00Z',
    '2026-11-20T23:60:00Z',
    '2026-11-20T23:59:60Z',
    '2026-11-20T10:00:00+24:00',
    '2026-11-20', // a bare date is not a time
    '0000-01-01T00:00:00Z',
    'next tuesday',
    '31/12/2026 10:00',
    '2026-11-20T10:00:00Zjunk',
    '',
  ])('%s → null', (input) => {
    expect(parseIsoTimestamp(input)).toBeNull();
  });

  it('isoTimestamp refuses an over-long value without parsing it', () => {
    const started = performance.now();
    expect(isoTimestamp.safeParse('2026-11-20T10:00:00Z' + ' '.repeat(1_000_000) + 'x').success).toBe(false);
    expect(performance.now() - started).toBeLessThan(200);
  });
});

describe('id: PostgreSQL integer ids', () => {
  it('accepts 1…2147483647 and refuses everything else', () => {
    expect(id.safeParse(1).success).toBe(true);
    expect(id.safeParse(INT32_MAX).success).toBe(true);
    expect(id.safeParse('42').data).toBe(42);
    for (const bad of [0, -1, INT32_MAX + 1, 1.5, Number.MAX_SAFE_INTEGER, 'abc', '1e400'])
      expect(id.safeParse(bad).success, String(bad)).toBe(false);
  });
});
