import { describe, expect, it } from 'vitest';
import { hoursErrors, invalidKeys, placeOf } from './opening-hours-errors';

describe('opening hours refusals in words', () => {
  it('names the day, the interval and the field, or the date', () => {
    const dates = ['2026-12-25', '2026-12-25'];
    expect(placeOf(['body', 'weekly', 'friday', 1], dates)).toBe('Friday, interval 2');
    expect(placeOf(['body', 'weekly', 'monday', 0, 'start'], dates)).toBe('Monday, interval 1, from');
    expect(placeOf(['body', 'weekly', 'monday', 0, 'end'], dates)).toBe('Monday, interval 1, until');
    expect(placeOf(['body', 'weekly'], dates)).toBe('Opening hours');
    expect(placeOf(['body', 'exceptions', 1, 'date'], dates)).toBe('Date 2 (2026-12-25), date');
    expect(placeOf(['body', 'exceptions', 0, 'intervals', 2, 'end'], dates)).toBe('Date 1 (2026-12-25), interval 3, until');
    expect(placeOf(['body', 'exceptions'], dates)).toBe('Dates');
  });

  it('turns a refusal into sentences, and marks the rows', () => {
    const error = {
      message: 'Validation error',
      data: { issues: [{ loc: ['body', 'weekly', 'friday', 1], msg: 'overlaps Friday 09:00–17:00' }] },
    };
    expect(hoursErrors(error, [])).toEqual(['Friday, interval 2: overlaps Friday 09:00–17:00']);
    expect([...invalidKeys(error)]).toEqual(['weekly.friday.1']);
    expect(hoursErrors({ message: 'Location not found' }, [])).toEqual(['Location not found']);
    expect(hoursErrors(null, [])).toEqual([]);
  });
});
