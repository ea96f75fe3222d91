import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ALWAYS_OPEN,
  dayOfDate,
  intervalOf,
  openingClock,
  scheduleIssues,
  WEEKDAYS,
  weekdayOfDay,
  type DatedHours,
  type Interval,
  type OpeningHours,
  type Schedule,
  type WeeklyHours,
} from './opening-hours';
import { offsetAt, wallClock } from './zoned-time';

/**
 * The opening-hours clock (docs/api.md#opening-hours): worked examples across both daylight-saving
 * changes in New York and Berlin, overnight intervals, holidays and a location in Sydney; then
 * properties against a brute-force reading of the rule, minute by minute, over random schedules.
 */

const MIN = 60_000;
const DAY = 86_400_000;
const iso = (d: Date | null) => d?.toISOString() ?? null;
const at = (s: string) => new Date(s);

/** A weekly schedule from clock times, e.g. `{ friday: ['09:00-17:00', '22:00-02:00'] }`; other days closed. */
function weekly(days: Partial<Record<(typeof WEEKDAYS)[number], string[]>>): WeeklyHours {
  return Object.fromEntries(WEEKDAYS.map((d) => [d, (days[d] ?? []).map(span)])) as WeeklyHours;
}
function span(text: string): Interval {
  const [start, end] = text.split('-') as [string, string];
  const interval = intervalOf(start, end);
  if (!interval) throw new Error(`bad interval ${text}`);
  return interval;
}
const closedOn = (date: string, name: string | null = null): DatedHours => ({ date, name, intervals: [] });
const specialOn = (date: string, ...spans: string[]): DatedHours => ({ date, name: null, intervals: spans.map(span) });
const clock = (timeZone: string, schedule: Partial<Schedule> & { weekly: WeeklyHours }) =>
  openingClock({ timeZone, exceptions: [], ...schedule });

const WEEKDAYS_9_TO_5 = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'].map((d) => [d, ['09:00-17:00']]);

describe('clock times', () => {
  it('reads intervals, overnight ones included, and refuses 25:00 and an end equal to the start', () => {
    expect(intervalOf('09:00', '17:00')).toEqual({ start: 540, end: 1020 });
    expect(intervalOf('22:00', '02:00')).toEqual({ start: 1320, end: 1560 });
    expect(intervalOf('22:00', '00:00')).toEqual({ start: 1320, end: 1440 });
    expect(intervalOf('22:00', '24:00')).toEqual({ start: 1320, end: 1440 });
    expect(intervalOf('00:00', '24:00')).toEqual({ start: 0, end: 1440 });
    expect(intervalOf('25:00', '26:00')).toBeNull();
    expect(intervalOf('09:00', '09:00')).toBeNull();
    expect(intervalOf('00:00', '00:00')).toBeNull();
    expect(intervalOf('24:00', '02:00')).toBeNull();
    expect(intervalOf('9:00', '17:00')).toBeNull();
  });

  it('checks dates against the calendar and names weekdays', () => {
    expect(dayOfDate('2026-02-29')).toBeNull();
    expect(dayOfDate('2026-12-25')).not.toBeNull();
    expect(weekdayOfDay(dayOfDate('2026-12-25')!)).toBe('friday');
    expect(weekdayOfDay(dayOfDate('1969-12-28')!)).toBe('sunday');
  });
});

describe('overnight intervals and holidays (New York)', () => {
  const ny = clock('America/New_York', {
    weekly: weekly({ ...Object.fromEntries(WEEKDAYS_9_TO_5), friday: ['09:00-17:00', '22:00-02:00'] }),
    exceptions: [closedOn('2026-12-25', 'Christmas Day'), closedOn('2026-12-19'), specialOn('2026-12-31', '20:00-03:00')],
  });

  it('an overnight interval runs into the next day, even when that day is a holiday', () => {
    // Friday 18 December, 22:00 EST = 03:00Z on the 19th; it closes Saturday 02:00 EST = 07:00Z.
    expect(ny.isOpen(at('2026-12-19T02:59:00Z'))).toBe(false);
    expect(ny.isOpen(at('2026-12-19T03:00:00Z'))).toBe(true);
    // Saturday the 19th is closed all day, but Friday's interval belongs to Friday.
    expect(ny.isOpen(at('2026-12-19T06:30:00Z'))).toBe(true);
    expect(iso(ny.nextClosing(at('2026-12-19T04:00:00Z')))).toBe('2026-12-19T07:00:00.000Z');
    expect(ny.isOpen(at('2026-12-19T07:00:00Z'))).toBe(false);
    expect(iso(ny.nextOpening(at('2026-12-19T07:00:00Z')))).toBe('2026-12-21T14:00:00.000Z');
  });

  it('a holiday on the day an overnight interval starts closes that night too', () => {
    // Christmas is a Friday: neither 09:00–17:00 nor 22:00–02:00.
    expect(ny.isOpen(at('2026-12-25T15:00:00Z'))).toBe(false);
    expect(ny.isOpen(at('2026-12-26T04:00:00Z'))).toBe(false);
    expect(ny.isOpen(at('2026-12-26T06:00:00Z'))).toBe(false);
    // Thursday the 24th closes at 17:00 EST (22:00Z); the next opening is Monday 28th 09:00 EST.
    expect(iso(ny.nextOpening(at('2026-12-24T22:00:00Z')))).toBe('2026-12-28T14:00:00.000Z');
  });

  it('special hours replace the weekday’s, and may run past midnight', () => {
    // New Year's Eve (a Thursday): 20:00–03:00 instead of 09:00–17:00.
    expect(ny.isOpen(at('2026-12-31T15:00:00Z'))).toBe(false);
    expect(iso(ny.nextOpening(at('2026-12-31T15:00:00Z')))).toBe('2027-01-01T01:00:00.000Z');
    expect(iso(ny.nextClosing(at('2027-01-01T02:00:00Z')))).toBe('2027-01-01T08:00:00.000Z');
    // New Year's Day is an ordinary Friday.
    expect(iso(ny.nextOpening(at('2027-01-01T08:00:00Z')))).toBe('2027-01-01T14:00:00.000Z');
    expect(ny.businessSeconds(at('2026-12-31T05:00:00Z'), at('2027-01-01T05:00:00Z'))).toBe(4 * 3600);
  });

  it('an opening or closing at the very instant asked is that instant', () => {
    expect(iso(ny.nextOpening(at('2026-12-21T14:00:00Z')))).toBe('2026-12-21T14:00:00.000Z');
    expect(iso(ny.nextClosing(at('2026-12-21T22:00:00Z')))).toBe('2026-12-21T22:00:00.000Z');
    expect(iso(ny.nextOpening(at('2026-12-21T14:00:00.001Z')))).toBe('2026-12-22T14:00:00.000Z');
    expect(ny.businessSeconds(at('2026-12-21T13:59:59.500Z'), at('2026-12-21T14:00:01Z'))).toBe(1);
  });
});

describe('daylight saving in New York', () => {
  it('spring forward (8 March 2026, 02:00 → 03:00): the skipped hour', () => {
    const sundays = (...spans: string[]) => clock('America/New_York', { weekly: weekly({ sunday: spans }) });
    // 01:00 EST (06:00Z) to 04:00 EDT (08:00Z): two hours.
    const early = sundays('01:00-04:00');
    expect(early.isOpen(at('2026-03-08T06:00:00Z'))).toBe(true);
    expect(iso(early.nextClosing(at('2026-03-08T06:00:00Z')))).toBe('2026-03-08T08:00:00.000Z');
    expect(early.businessSeconds(at('2026-03-08T00:00:00Z'), at('2026-03-09T00:00:00Z'))).toBe(7200);
    // An interval wholly in the skipped hour never opens that day.
    const skipped = sundays('02:00-02:30');
    expect(iso(skipped.nextOpening(at('2026-03-08T05:00:00Z')))).toBe('2026-03-15T06:00:00.000Z');
    // One that ends or starts in it does so at the jump.
    expect(sundays('01:30-02:30').businessSeconds(at('2026-03-08T00:00:00Z'), at('2026-03-09T00:00:00Z'))).toBe(1800);
    const late = sundays('02:30-05:00');
    expect(iso(late.nextOpening(at('2026-03-08T00:00:00Z')))).toBe('2026-03-08T07:00:00.000Z');
    expect(iso(late.nextClosing(at('2026-03-08T07:00:00Z')))).toBe('2026-03-08T09:00:00.000Z');
    // Saturday night into the change: 22:00 EST (03:00Z) to 03:00 EDT (07:00Z), four hours.
    const night = clock('America/New_York', { weekly: weekly({ saturday: ['22:00-03:00'] }) });
    expect(night.businessSeconds(at('2026-03-07T00:00:00Z'), at('2026-03-09T00:00:00Z'))).toBe(4 * 3600);
  });

  it('fall back (1 November 2026, 02:00 → 01:00): the repeated hour counts once', () => {
    const sundays = (...spans: string[]) => clock('America/New_York', { weekly: weekly({ sunday: spans }) });
    // 01:00 EDT (05:00Z) to 02:00 EST (07:00Z): two hours.
    const repeated = sundays('01:00-02:00');
    expect(iso(repeated.nextOpening(at('2026-11-01T00:00:00Z')))).toBe('2026-11-01T05:00:00.000Z');
    expect(iso(repeated.nextClosing(at('2026-11-01T05:00:00Z')))).toBe('2026-11-01T07:00:00.000Z');
    // Saturday 22:00 EDT to the first 01:30 (EDT, 05:30Z): no reopening when 01:00 comes round again.
    const night = clock('America/New_York', { weekly: weekly({ saturday: ['22:00-01:30'] }) });
    expect(iso(night.nextClosing(at('2026-11-01T03:00:00Z')))).toBe('2026-11-01T05:30:00.000Z');
    expect(night.isOpen(at('2026-11-01T06:15:00Z'))).toBe(false);
    expect(iso(night.nextOpening(at('2026-11-01T05:30:00Z')))).toBe('2026-11-08T03:00:00.000Z');
    // 22:00 EDT to 03:00 EST: six hours.
    const long = clock('America/New_York', { weekly: weekly({ saturday: ['22:00-03:00'] }) });
    expect(long.businessSeconds(at('2026-10-31T00:00:00Z'), at('2026-11-02T00:00:00Z'))).toBe(6 * 3600);
  });
});

describe('daylight saving in Berlin', () => {
  const daily = clock('Europe/Berlin', { weekly: weekly(Object.fromEntries(WEEKDAYS.map((d) => [d, ['09:00-17:00']]))) });

  it('keeps 09:00–17:00 local across both changes', () => {
    // The week of 29 March 2026 (02:00 CET → 03:00 CEST): seven days of eight hours.
    expect(daily.businessSeconds(at('2026-03-22T23:00:00Z'), at('2026-03-29T22:00:00Z'))).toBe(7 * 8 * 3600);
    expect(daily.isOpen(at('2026-03-28T08:30:00Z'))).toBe(true); // 09:30 CET
    expect(daily.isOpen(at('2026-03-29T07:30:00Z'))).toBe(true); // 09:30 CEST
    expect(iso(daily.nextOpening(at('2026-03-29T06:00:00Z')))).toBe('2026-03-29T07:00:00.000Z');
    // 25 October 2026 (03:00 CEST → 02:00 CET): 09:00 CET is 08:00Z.
    expect(iso(daily.nextOpening(at('2026-10-24T16:00:00Z')))).toBe('2026-10-25T08:00:00.000Z');
    expect(iso(daily.nextClosing(at('2026-10-24T08:00:00Z')))).toBe('2026-10-24T15:00:00.000Z');
  });

  it('an overnight interval spanning the change is an hour shorter in spring and longer in autumn', () => {
    const night = clock('Europe/Berlin', { weekly: weekly({ saturday: ['22:00-04:00'] }) });
    expect(night.businessSeconds(at('2026-03-28T00:00:00Z'), at('2026-03-30T00:00:00Z'))).toBe(5 * 3600);
    expect(night.businessSeconds(at('2026-10-24T00:00:00Z'), at('2026-10-26T00:00:00Z'))).toBe(7 * 3600);
  });
});

describe('a location on another continent (Sydney)', () => {
  const sydney = clock('Australia/Sydney', {
    weekly: weekly(Object.fromEntries(WEEKDAYS_9_TO_5)),
    exceptions: [closedOn('2026-01-26', 'Australia Day')],
  });

  it('opens on its own Monday, a day ahead of UTC, and keeps its holiday', () => {
    // Sunday 22:00 AEST (UTC+10) in July: Monday 09:00 AEST is 23:00Z the same UTC day.
    expect(sydney.isOpen(at('2026-07-05T12:00:00Z'))).toBe(false);
    expect(iso(sydney.nextOpening(at('2026-07-05T12:00:00Z')))).toBe('2026-07-05T23:00:00.000Z');
    // Australia Day (a Monday, AEDT = UTC+11) is closed: Tuesday 09:00 AEDT is 22:00Z on Monday.
    expect(sydney.isOpen(at('2026-01-26T00:00:00Z'))).toBe(false);
    expect(iso(sydney.nextOpening(at('2026-01-25T12:00:00Z')))).toBe('2026-01-26T22:00:00.000Z');
  });

  it('follows its own daylight-saving changes (5 April and 4 October 2026)', () => {
    // Friday 3 April 17:00 AEDT = 06:00Z; Monday 6 April 09:00 AEST = 23:00Z on the 5th.
    expect(iso(sydney.nextClosing(at('2026-04-03T00:00:00Z')))).toBe('2026-04-03T06:00:00.000Z');
    expect(iso(sydney.nextOpening(at('2026-04-03T06:00:00Z')))).toBe('2026-04-05T23:00:00.000Z');
    // Friday 2 October 09:00 AEST = 23:00Z on the 1st; Monday 5 October 09:00 AEDT = 22:00Z on the 4th.
    expect(iso(sydney.nextOpening(at('2026-10-01T12:00:00Z')))).toBe('2026-10-01T23:00:00.000Z');
    expect(iso(sydney.nextOpening(at('2026-10-02T12:00:00Z')))).toBe('2026-10-04T22:00:00.000Z');
  });
});

describe('schedules that never close or never open', () => {
  it('open around the clock: no opening or closing ahead', () => {
    const always = openingClock({ timeZone: 'Europe/Berlin', ...ALWAYS_OPEN });
    expect(always.isOpen(at('2026-03-29T01:30:00Z'))).toBe(true);
    expect(always.nextClosing(at('2026-03-29T01:30:00Z'))).toBeNull();
    expect(always.nextOpening(at('2026-03-29T01:30:00Z'))).toBeNull();
    expect(always.businessSeconds(at('2026-03-29T00:00:00Z'), at('2026-03-30T00:00:00Z'))).toBe(86_400);
    // Touching days make one period: no closing at midnight.
    expect(always.openPeriods(at('2026-03-28T00:00:00Z'), at('2026-03-30T00:00:00Z'))).toEqual([
      { start: at('2026-03-28T00:00:00Z'), end: at('2026-03-30T00:00:00Z') },
    ]);
  });

  it('no weekly hours: open only on its special days', () => {
    const rare = clock('UTC', { weekly: weekly({}), exceptions: [specialOn('2026-12-25', '10:00-14:00')] });
    expect(rare.isOpen(at('2026-06-01T12:00:00Z'))).toBe(false);
    expect(iso(rare.nextOpening(at('2026-01-01T00:00:00Z')))).toBe('2026-12-25T10:00:00.000Z');
    expect(iso(rare.nextClosing(at('2026-01-01T00:00:00Z')))).toBe('2026-12-25T14:00:00.000Z');
    expect(rare.nextOpening(at('2026-12-25T14:00:00Z'))).toBeNull();
    expect(rare.nextClosing(at('2026-12-25T14:00:01Z'))).toBeNull();
    expect(rare.businessSeconds(at('2026-01-01T00:00:00Z'), at('2027-01-01T00:00:00Z'))).toBe(4 * 3600);
  });

  it('finds an opening or closing years ahead without walking every day', () => {
    // Open around the clock in overnight intervals of 06:00 to 06:00, each running into the next.
    const around = clock('UTC', {
      weekly: Object.fromEntries(WEEKDAYS.map((d) => [d, [{ start: 360, end: 1800 }]])) as WeeklyHours,
      exceptions: [closedOn('2027-06-01'), closedOn('2150-01-01')],
    });
    const started = performance.now();
    // Monday 31 May's interval still runs to 06:00 on the closed Tuesday.
    expect(iso(around.nextClosing(at('2026-01-01T00:00:00Z')))).toBe('2027-06-01T06:00:00.000Z');
    expect(iso(around.nextOpening(at('2027-06-01T06:00:00Z')))).toBe('2027-06-02T06:00:00.000Z');
    expect(iso(around.nextClosing(at('2027-06-02T06:00:00Z')))).toBe('2150-01-01T06:00:00.000Z');
    expect(around.nextClosing(at('2150-01-02T06:00:00Z'))).toBeNull();
    expect(around.businessSeconds(at('2027-05-01T00:00:00Z'), at('2027-07-01T00:00:00Z'))).toBe((61 * 24 - 24) * 3600);
    const rare = clock('Asia/Tokyo', { weekly: weekly({}), exceptions: [specialOn('2199-12-31', '10:00-12:00')] });
    expect(iso(rare.nextOpening(at('2026-01-01T00:00:00Z')))).toBe('2199-12-31T01:00:00.000Z');
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('previousClosing: when the closed period began, however long ago', () => {
    const always = openingClock({ timeZone: 'Europe/Berlin', ...ALWAYS_OPEN });
    expect(always.previousClosing(at('2026-03-29T01:30:00Z'))).toBeNull();
    const rare = clock('UTC', { weekly: weekly({}), exceptions: [specialOn('2026-01-05', '10:00-14:00')] });
    expect(rare.previousClosing(at('2026-01-05T12:00:00Z'))).toBeNull();
    expect(iso(rare.previousClosing(at('2026-01-05T14:00:00Z')))).toBe('2026-01-05T14:00:00.000Z');
    expect(iso(rare.previousClosing(at('2029-06-01T00:00:00Z')))).toBe('2026-01-05T14:00:00.000Z');
    // Friday 22:00–02:00 and a closed fortnight after it: the period began at Saturday 02:00.
    const fortnight = Array.from({ length: 14 }, (_, i) => closedOn(`2026-12-${String(19 + i).padStart(2, '0')}`));
    const late = clock('UTC', { weekly: weekly({ friday: ['22:00-02:00'], monday: ['09:00-17:00'] }), exceptions: fortnight });
    expect(iso(late.previousClosing(at('2026-12-19T01:00:00Z')))).toBe('2026-12-14T17:00:00.000Z');
    expect(iso(late.previousClosing(at('2026-12-31T12:00:00Z')))).toBe('2026-12-19T02:00:00.000Z');
  });

  it('touching intervals are one open period', () => {
    const split = clock('UTC', { weekly: weekly({ monday: ['09:00-12:00', '12:00-17:00'], tuesday: ['09:00-12:00'] }) });
    // Monday 2 March 2026.
    expect(iso(split.nextClosing(at('2026-03-02T10:00:00Z')))).toBe('2026-03-02T17:00:00.000Z');
    expect(iso(split.nextOpening(at('2026-03-02T10:00:00Z')))).toBe('2026-03-03T09:00:00.000Z');
  });
});

describe('what the API refuses', () => {
  const schedule = (w: Parameters<typeof weekly>[0], exceptions: DatedHours[] = []): Schedule => ({
    weekly: weekly(w),
    exceptions,
  });

  it('overlapping intervals, within a day, across midnight and from Sunday into Monday', () => {
    expect(scheduleIssues(schedule({ monday: ['09:00-12:00', '12:00-17:00'] }))).toEqual([]);
    expect(scheduleIssues(schedule({ monday: ['09:00-12:00', '11:00-13:00'] }))).toEqual([
      { path: ['weekly', 'monday', 1], message: 'overlaps Monday 09:00–12:00' },
    ]);
    expect(scheduleIssues(schedule({ monday: ['22:00-02:00'], tuesday: ['01:00-05:00'] }))).toEqual([
      { path: ['weekly', 'tuesday', 0], message: 'overlaps Monday 22:00–02:00' },
    ]);
    expect(scheduleIssues(schedule({ sunday: ['23:00-01:00'], monday: ['00:30-08:00'] }))).toEqual([
      { path: ['weekly', 'monday', 0], message: 'overlaps Sunday 23:00–01:00' },
    ]);
  });

  it('a date listed twice, and exceptions overlapping their neighbours', () => {
    const friday = { friday: ['09:00-17:00', '22:00-02:00'] };
    expect(scheduleIssues(schedule(friday, [closedOn('2026-12-25'), closedOn('2026-12-25')]))).toEqual([
      { path: ['exceptions', 1, 'date'], message: '2026-12-25 is already listed' },
    ]);
    // Saturday the 19th from 01:00, while Friday's interval runs to 02:00.
    expect(scheduleIssues(schedule(friday, [specialOn('2026-12-19', '01:00-03:00')]))).toEqual([
      { path: ['exceptions', 0, 'intervals', 0], message: 'overlaps Friday 22:00–02:00, which runs past midnight' },
    ]);
    // Thursday the 31st until 10:00 the next morning, into Friday's 09:00.
    expect(scheduleIssues(schedule(friday, [specialOn('2026-12-31', '20:00-10:00')]))).toEqual([
      { path: ['exceptions', 0, 'intervals', 0], message: 'runs past midnight into Friday 09:00–17:00' },
    ]);
    // Two exceptions in a row are checked once, against each other.
    expect(
      scheduleIssues(
        schedule({}, [specialOn('2026-12-24', '20:00-03:00'), specialOn('2026-12-25', '02:00-04:00', '03:00-05:00')]),
      ),
    ).toEqual([
      { path: ['exceptions', 1, 'intervals', 1], message: 'overlaps 02:00–04:00' },
      { path: ['exceptions', 1, 'intervals', 0], message: 'overlaps 2026-12-24 20:00–03:00, which runs past midnight' },
    ]);
  });
});

// -------------------------------------------------------------------------------------------------
// Properties: the clock against the rule read minute by minute
// -------------------------------------------------------------------------------------------------

/**
 * The rule, read the slow way: walk the UTC minutes, read the local clock at each, and keep the
 * latest reading so far (the clock "reaches" a time once, whatever it shows when it goes back).
 * Open when that reading lies in an interval of its date, or in the part of the previous date's
 * interval that runs past midnight. `open[0]` is the minute before `from`.
 */
function bruteForce(hours: OpeningHours, from: number, minutes: number): boolean[] {
  const exceptions = new Map(hours.exceptions.map((e) => [dayOfDate(e.date)!, e.intervals]));
  const intervals = (day: number) => exceptions.get(day) ?? hours.weekly[weekdayOfDay(day)];
  const open: boolean[] = [];
  let reached = -Infinity;
  for (let t = from - DAY; t < from + minutes * MIN; t += MIN) {
    const w = wallClock(hours.timeZone, new Date(t));
    reached = Math.max(reached, Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute) / MIN);
    if (t < from - MIN) continue;
    const day = Math.floor(reached / 1440);
    const minute = reached - day * 1440;
    open.push(
      intervals(day).some((i) => i.start <= minute && minute < i.end) ||
        intervals(day - 1).some((i) => i.start <= minute + 1440 && minute + 1440 < i.end),
    );
  }
  return open;
}

const ZONES = [
  'America/New_York',
  'Europe/Berlin',
  'Australia/Sydney',
  'Australia/Lord_Howe', // a 30-minute change
  'America/Santiago', // changes at midnight: the date itself repeats or skips an hour
  'America/Havana',
  'Pacific/Chatham', // +12:45 / +13:45
  'Asia/Kolkata',
  'UTC',
];

/** Each zone's offset changes in 2026: the UTC midnight before each. */
const CHANGES = new Map(
  ZONES.map((zone) => {
    const found: number[] = [];
    const start = Date.UTC(2026, 0, 1);
    for (let t = start, offset = offsetAt(zone, t); t < start + 365 * DAY; t += DAY) {
      const next = offsetAt(zone, t + DAY);
      if (next !== offset) found.push(t);
      offset = next;
    }
    return [zone, found];
  }),
);

// Mostly round times and the small hours, where clocks change (Santiago's at midnight, Chatham's at 02:45).
const minuteArb = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 47 }).map((h) => h * 30), weight: 2 },
  { arbitrary: fc.integer({ min: 0, max: 240 }), weight: 2 },
  { arbitrary: fc.integer({ min: 1380, max: 1439 }), weight: 1 },
  { arbitrary: fc.integer({ min: 0, max: 1439 }), weight: 1 },
);
/** As the API reads two clock times: an end at or before the start is the next day's. */
const intervalArb = fc.oneof(
  { arbitrary: fc.constant<Interval>({ start: 0, end: 1440 }), weight: 1 },
  {
    arbitrary: fc
      .tuple(minuteArb, minuteArb)
      .filter(([s, e]) => s !== e)
      .map(([start, end]): Interval => ({ start, end: end < start ? end + 1440 : end })),
    weight: 12,
  },
);
// Overlapping intervals are allowed here: the API refuses them, the clock still merges them.
const dayArb = fc.array(intervalArb, { maxLength: 3 });
const WINDOW_MINUTES = 3 * 1440;

const caseArb = fc
  .record({
    zone: fc.constantFrom(...ZONES),
    days: fc.tuple(dayArb, dayArb, dayArb, dayArb, dayArb, dayArb, dayArb),
    exceptions: fc.array(fc.record({ offset: fc.integer({ min: -2, max: 4 }), intervals: dayArb }), { maxLength: 3 }),
    nearChange: fc.oneof(fc.constant(true), fc.constant(true), fc.constant(false)),
    pick: fc.nat(),
    shift: fc.integer({ min: 0, max: 2 * 1440 }),
  })
  .map(({ zone, days, exceptions, nearChange, pick, shift }) => {
    const changes = CHANGES.get(zone)!;
    const anchor = nearChange && changes.length > 0 ? changes[pick % changes.length]! : Date.UTC(2026, 0, 1) + (pick % 365) * DAY;
    const from = Math.floor(anchor / MIN) * MIN - shift * MIN;
    const firstDay = Math.floor(from / DAY);
    const seen = new Set<number>();
    const dated = exceptions
      .filter((e) => !seen.has(e.offset) && seen.add(e.offset))
      .map((e) => ({
        date: new Date((firstDay + e.offset) * DAY).toISOString().slice(0, 10),
        name: null,
        intervals: e.intervals,
      }));
    const hours: OpeningHours = {
      timeZone: zone,
      weekly: Object.fromEntries(WEEKDAYS.map((d, i) => [d, days[i]!])) as WeeklyHours,
      exceptions: dated,
    };
    return { hours, from };
  });

// Seconds of CPU alone (a minute-by-minute reading of 60 random schedules each); vitest runs four
// files at once on two cores, so a run shares them: a deadline past the default 30 s, not fewer runs.
describe('properties against a minute-by-minute reading', { timeout: 120_000 }, () => {
  it('isOpen and openPeriods agree with the brute force at every minute', () => {
    fc.assert(
      fc.property(caseArb, ({ hours, from }) => {
        const truth = bruteForce(hours, from, WINDOW_MINUTES).slice(1);
        const c = openingClock(hours);
        const fromPeriods = new Array<boolean>(WINDOW_MINUTES).fill(false);
        for (const p of c.openPeriods(new Date(from), new Date(from + WINDOW_MINUTES * MIN))) {
          for (let t = p.start.getTime(); t < p.end.getTime(); t += MIN) fromPeriods[(t - from) / MIN] = true;
        }
        for (let m = 0; m < WINDOW_MINUTES; m++) {
          if (c.isOpen(new Date(from + m * MIN)) !== truth[m]) {
            throw new Error(`isOpen at ${new Date(from + m * MIN).toISOString()} (${hours.timeZone}): expected ${truth[m]}`);
          }
        }
        expect(fromPeriods).toEqual(truth);
      }),
      { numRuns: 60 },
    );
  });

  it('nextOpening, nextClosing, previousClosing and businessSeconds agree with the brute force', () => {
    fc.assert(
      fc.property(
        caseArb,
        fc.array(fc.tuple(fc.nat({ max: WINDOW_MINUTES - 1 }), fc.nat({ max: WINDOW_MINUTES - 1 })), {
          minLength: 5,
          maxLength: 5,
        }),
        ({ hours, from }, probes) => {
          const open = bruteForce(hours, from, WINDOW_MINUTES); // open[m + 1] is minute m
          const c = openingClock(hours);
          const end = from + WINDOW_MINUTES * MIN;
          for (const [a, b] of probes) {
            const after = new Date(from + a * MIN);
            let opening: number | null = null;
            let closing: number | null = null;
            for (let m = a; m < WINDOW_MINUTES && (opening === null || closing === null); m++) {
              if (opening === null && open[m + 1] && !open[m]) opening = from + m * MIN;
              if (closing === null && !open[m + 1] && open[m]) closing = from + m * MIN;
            }
            const next = c.nextOpening(after)?.getTime() ?? null;
            const close = c.nextClosing(after)?.getTime() ?? null;
            if (opening !== null) expect(next).toBe(opening);
            else expect(next === null || next >= end).toBe(true);
            if (closing !== null) expect(close).toBe(closing);
            else expect(close === null || close >= end).toBe(true);

            // The last closing at or before `after`: open the minute before, closed at it.
            let previous: number | null = null;
            for (let m = a; m >= 0 && previous === null; m--) if (open[m] && !open[m + 1]) previous = from + m * MIN;
            const prev = c.previousClosing(after)?.getTime() ?? null;
            if (previous !== null) expect(prev).toBe(previous);
            else expect(prev === null || prev < from).toBe(true);

            const [lo, hi] = [Math.min(a, b), Math.max(a, b)];
            const counted = open.slice(lo + 1, hi + 1).filter(Boolean).length;
            expect(c.businessSeconds(new Date(from + lo * MIN), new Date(from + hi * MIN))).toBe(counted * 60);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
