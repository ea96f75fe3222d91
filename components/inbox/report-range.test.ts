import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReportQuery } from '@/server/schemas/reports';
import { zonedInstant } from '@/server/shared/zoned-time';
import { dayIn, lastDays, rangeQuery } from './report-range';

/** The Reports page's range: days on the clock the report reads them on, and the same verdict as the contract. */

describe('the Reports page range', () => {
  const now = new Date('2026-03-15T16:30:00Z'); // Sunday 12:30 in New York, Monday 01:30 in Tokyo

  it('reads today on the chosen clock', () => {
    expect(dayIn('America/New_York', 0, now)).toBe('2026-03-15');
    expect(dayIn('Asia/Tokyo', 0, now)).toBe('2026-03-16');
    expect(dayIn('Asia/Tokyo', -29, now)).toBe('2026-02-15'); // February has 28 days
    expect(lastDays('America/New_York', 7, now)).toEqual({ from: '2026-03-09', to: '2026-03-15' });
    expect(lastDays('Asia/Tokyo', 7, now)).toEqual({ from: '2026-03-10', to: '2026-03-16' });
  });

  it('asks from the first midnight to the one after the last day, on that clock (daylight saving included)', () => {
    const march = { from: '2026-03-01', to: '2026-03-31' };
    // New York changes to summer time on 8 March: UTC−5, then UTC−4.
    expect(rangeQuery(march, 'America/New_York')).toEqual({ from: '2026-03-01T05:00:00.000Z', to: '2026-04-01T04:00:00.000Z' });
    expect(rangeQuery(march, 'Asia/Tokyo')).toEqual({ from: '2026-02-28T15:00:00.000Z', to: '2026-03-31T15:00:00.000Z' });
    // Santiago's clocks skip midnight (5 September 2026): that day starts at 01:00.
    expect(rangeQuery({ from: '2026-09-06', to: '2026-09-06' }, 'America/Santiago')).toEqual({
      from: '2026-09-06T04:00:00.000Z',
      to: '2026-09-07T03:00:00.000Z',
    });
  });

  it('refuses what the server would, and says why', () => {
    expect(rangeQuery({ from: '2026-03-02', to: '2026-03-01' }, 'UTC')).toEqual({
      error: 'The end date must be on or after the start date.',
    });
    expect(rangeQuery({ from: '', to: '2026-03-01' }, 'UTC')).toEqual({ error: 'Choose both dates.' });
    expect(rangeQuery({ from: '2026-02-30', to: '2026-03-01' }, 'UTC')).toEqual({ error: 'Choose both dates.' });
    expect(rangeQuery({ from: '2026-01-01', to: '2027-01-01' }, 'UTC')).toHaveProperty('from'); // 366 days
    expect(rangeQuery({ from: '2026-01-01', to: '2027-01-02' }, 'UTC')).toEqual({ error: 'A report covers at most 366 days.' });
    // 366 days in New York that take in November's extra hour, not March's lost one: an hour too long.
    expect(rangeQuery({ from: '2026-03-09', to: '2027-03-09' }, 'America/New_York')).toEqual({
      error: 'A report covers at most 366 days.',
    });
  });

  it('takes a range exactly when the contract does', () => {
    const zones = ['UTC', 'America/New_York', 'Asia/Tokyo', 'Europe/London', 'Australia/Lord_Howe', 'America/Santiago'];
    const DAY = 86_400_000;
    /** The instants of a range's midnights, however long: what the contract is asked to judge. */
    const instants = (start: number, length: number, zone: string) => {
      const midnight = (n: number) => {
        const d = new Date(n * DAY);
        return zonedInstant(zone, d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), 0, 0).toISOString();
      };
      return { from: midnight(start), to: midnight(start + length + 1) };
    };
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(2025, 0, 1) / DAY, max: Date.UTC(2028, 0, 1) / DAY }),
        fc.integer({ min: -3, max: 370 }),
        fc.constantFrom(...zones),
        (start, length, zone) => {
          const day = (n: number) => new Date(n * DAY).toISOString().slice(0, 10);
          const asked = rangeQuery({ from: day(start), to: day(start + length) }, zone);
          const contract = ReportQuery.safeParse(instants(start, length, zone));
          expect('error' in asked).toBe(!contract.success);
          if (!('error' in asked)) expect(asked).toEqual(instants(start, length, zone));
        },
      ),
      { numRuns: 1000 },
    );
  });
});
