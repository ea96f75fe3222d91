import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { id, idParam, INT32_MAX, isoTimestamp, paginationQuery, parseIsoTimestamp } from './common';

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
    ['1000-01-01T00:00:00Z', '1000-01-01T00:00:00.000Z'], // the first year accepted
    ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59.000Z'], // and the last
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
    '0001-01-01T00:00:00Z', // years below 1000 do not round-trip through the driver
    '0999-12-31T23:59:59Z',
    '9999-12-31T23:00:00-01:00', // year 10000 once the offset is applied
    '1000-01-01T00:30:00+01:00', // year 999 once the offset is applied
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

describe('id: PostgreSQL integer ids in JSON', () => {
  it('accepts the JSON integers 1…2147483647 and nothing else: no coercion', () => {
    expect(id.safeParse(1).success).toBe(true);
    expect(id.safeParse(INT32_MAX).data).toBe(INT32_MAX);
    for (const bad of [0, -1, INT32_MAX + 1, 1.5, Number.MAX_SAFE_INTEGER, NaN, Infinity, true, false, [3], '3', '42', null, {}])
      expect(id.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
  });
});

describe('idParam: ids in a path or query string', () => {
  it('reads positive digits without sign or leading zero', () => {
    expect(idParam.safeParse('1').data).toBe(1);
    expect(idParam.safeParse('42').data).toBe(42);
    expect(idParam.safeParse(String(INT32_MAX)).data).toBe(INT32_MAX);
  });

  it.each(['0', '-4', '1.5', 'abc', '1e3', ' 1', '1 ', '+1', '01', '0x10', '', '١٢'])('%j is invalid_format', (bad) => {
    const result = idParam.safeParse(bad);
    expect(result.error?.issues.map((i) => i.code)).toEqual(['invalid_format']);
  });

  it('digits past 2147483647 are too_big (a 404 in a path, server/http/route.ts)', () => {
    for (const big of [String(INT32_MAX + 1), '9'.repeat(17), '1'.repeat(10_000)])
      expect(idParam.safeParse(big).error?.issues.map((i) => i.code)).toEqual(['too_big']);
  });

  it('a repeated query key (an array) or a number is invalid_type', () => {
    expect(idParam.safeParse(['3']).error?.issues.map((i) => i.code)).toEqual(['invalid_type']);
    expect(idParam.safeParse(3).error?.issues.map((i) => i.code)).toEqual(['invalid_type']);
  });
});

describe('paginationQuery: page and page_size from a query string', () => {
  const query = z.object(paginationQuery);
  it('defaults, digits, bounds', () => {
    expect(query.parse({})).toEqual({ page: 1, page_size: 25 });
    expect(query.parse({ page: '3', page_size: '100' })).toEqual({ page: 3, page_size: 100 });
    for (const bad of [
      { page: '0' },
      { page: '1e2' },
      { page: '0x10' },
      { page: '10001' },
      { page_size: '101' },
      { page_size: '5.0' },
    ])
      expect(query.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
  });
});
