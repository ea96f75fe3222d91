import { describe, expect, it } from 'vitest';
import { locationClocks } from './location-clocks';
import { ALWAYS_OPEN, WEEKDAYS, type OpeningHours } from './opening-hours';

/** The per-location clock cache the waiting digest (and reports' recount) share. */

const nineToFive = Object.fromEntries(WEEKDAYS.map((d) => [d, [{ start: 540, end: 1020 }]])) as OpeningHours['weekly'];

describe('locationClocks', () => {
  it("builds each location's clock once, on its own hours and zone", () => {
    const asked: (number | null)[] = [];
    const clockOf = locationClocks((locationId) => {
      asked.push(locationId);
      return locationId === 7
        ? { timeZone: 'Asia/Tokyo', weekly: nineToFive, exceptions: [] }
        : { timeZone: 'America/New_York', ...ALWAYS_OPEN };
    });
    const tokyo = clockOf(7);
    expect(clockOf(7)).toBe(tokyo);
    expect(clockOf(null)).toBe(clockOf(null));
    expect(clockOf(null)).not.toBe(tokyo);
    expect(asked).toEqual([7, null]);
    // 2026-06-01 (a Monday) 00:00 to 12:00 UTC is 09:00 to 21:00 in Tokyo: open 09:00 to 17:00 there.
    const [from, to] = [new Date('2026-06-01T00:00:00Z'), new Date('2026-06-01T12:00:00Z')];
    expect(tokyo.timeZone).toBe('Asia/Tokyo');
    expect(tokyo.businessSeconds(from, to)).toBe(8 * 3600);
    expect(clockOf(null).businessSeconds(from, to)).toBe(12 * 3600);
  });
});
