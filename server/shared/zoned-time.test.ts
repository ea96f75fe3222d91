import { describe, expect, it } from 'vitest';
import { fromLocalInput, quickPicks, zonedInstant } from './zoned-time';

describe('send later quick picks in the business’s time zone', () => {
  it('tomorrow 9:00 and Monday 9:00 are 9:00 where the business is', () => {
    // Wednesday 25 Nov 2026, 23:30 in New York (04:30 UTC on Thursday).
    const now = new Date('2026-11-26T04:30:00Z');
    const [tomorrow, monday] = quickPicks('America/New_York', now);
    expect(tomorrow!.at.toISOString()).toBe('2026-11-26T14:00:00.000Z');
    expect(monday!.at.toISOString()).toBe('2026-11-30T14:00:00.000Z');
    // In Tokyo it is already Thursday afternoon.
    const [tokyoTomorrow] = quickPicks('Asia/Tokyo', now);
    expect(tokyoTomorrow!.at.toISOString()).toBe('2026-11-27T00:00:00.000Z');
  });

  it('on a Monday, Monday 9:00 is next week’s; daylight saving is followed', () => {
    const monday = new Date('2026-11-30T12:00:00Z');
    expect(quickPicks('Europe/Paris', monday)[1]!.at.toISOString()).toBe('2026-12-07T08:00:00.000Z');
    expect(zonedInstant('Europe/Paris', 2026, 7, 1, 9, 0).toISOString()).toBe('2026-07-01T07:00:00.000Z');
    expect(fromLocalInput('UTC', '2026-12-01T09:15')?.toISOString()).toBe('2026-12-01T09:15:00.000Z');
    expect(fromLocalInput('UTC', 'nonsense')).toBeNull();
  });
});
