import { clockOf } from './quiet-hours';
import { offsetAt, wallClock } from './zoned-time';

/**
 * Opening hours (docs/api.md#opening-hours): when a business or one of its locations is open to
 * answer its clients, as a weekly schedule plus dated exceptions, in the location's time zone.
 * Not to be confused with quiet hours' sending window (docs/api.md#quiet-hours), which is when
 * automated texts may reach a client: two rules, two modules.
 *
 * Pure and browser-safe (Intl only): the server answers with it, the settings page validates and
 * describes with it. The one clock every feature asks is `openingClock(hours)`:
 *
 *   const clock = openingClock({ timeZone: 'America/New_York', weekly, exceptions });
 *   clock.isOpen(now);             // open at this instant?
 *   clock.nextOpening(now);        // the next instant ≥ now at which it opens (null: never again)
 *   clock.nextClosing(now);        // the next instant ≥ now at which it closes (null: never)
 *   clock.previousClosing(now);    // the last instant ≤ now at which it closed (null: never before)
 *   clock.businessSeconds(a, b);   // seconds of [a, b) during which it is open
 *
 * The rules, stated once:
 * - An interval belongs to the local date it starts on: `{ start: 1320, end: 1560 }` on Friday is
 *   Friday 22:00 to Saturday 02:00. Intervals are half-open: open at 22:00, closed at 02:00.
 * - A dated exception replaces that date's own intervals (all of them; none: closed all day). It
 *   does not cut short the previous day's interval that runs past midnight into it, which belongs
 *   to the previous day.
 * - Intervals are read on the local clock, through daylight-saving changes: an interval opens the
 *   first moment the location's clock reaches its start and closes the first moment it reaches its
 *   end. When clocks go back, the repeated hour counts once (a span ending at 01:30 closes at the
 *   first 01:30; one from 01:00 to 02:00 lasts two hours); when they go forward, a start or end in
 *   the skipped hour happens at the jump (01:30–02:30 lasts 30 minutes; 02:00–02:30 never opens).
 * - Touching intervals (09:00–12:00, 12:00–17:00) make one open period: no closing at 12:00.
 */

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** The most intervals one day (or one exception) may have. */
export const MAX_INTERVALS_PER_DAY = 12;
/** The most dated exceptions one schedule may hold: a year of special days. */
export const MAX_EXCEPTIONS = 366;
/** The longest name of an exception ("Christmas Day"). */
export const MAX_EXCEPTION_NAME = 100;

/**
 * Minutes after the local midnight of the day the interval starts, [start, end): 0 ≤ start < 1440
 * and start < end ≤ start + 1440. An end past 1440 runs into the next day (22:00–02:00 is
 * { start: 1320, end: 1560 }); 1440 is midnight.
 */
export type Interval = { start: number; end: number };
export type WeeklyHours = Record<Weekday, Interval[]>;
/** A date's own hours instead of its weekday's; `date` is YYYY-MM-DD, no intervals: closed all day. */
export type DatedHours = { date: string; name: string | null; intervals: Interval[] };
export type Schedule = { weekly: WeeklyHours; exceptions: DatedHours[] };
/** A schedule and the IANA time zone its clock times are read in. */
export type OpeningHours = Schedule & { timeZone: string };

/**
 * Whose hours apply to a location: its own, else the business's, else the default (none set: open
 * around the clock, so nothing that waits for an opening ever waits).
 */
export const OPENING_HOURS_SOURCES = ['location', 'business', 'default'] as const;
export type OpeningHoursSource = (typeof OPENING_HOURS_SOURCES)[number];

/** What a business or location that has set no hours keeps to: open around the clock. */
export const ALWAYS_OPEN: Schedule = {
  weekly: Object.fromEntries(WEEKDAYS.map((d) => [d, [{ start: 0, end: 1440 }]])) as WeeklyHours,
  exceptions: [],
};

const MINUTE = 60_000;
const DAY = 86_400_000;

// ---------------------------------------------------------------------------------------------
// Clock times in and out
// ---------------------------------------------------------------------------------------------

const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** "22:00" → 1320; "24:00" → 1440 when `allowMidnight` (an end); anything else → null. */
export function minuteOfClock(clock: string, allowMidnight = false): number | null {
  if (allowMidnight && clock === '24:00') return 1440;
  const m = HH_MM.exec(clock);
  return m ? Number(m[1]) * 60 + Number(m[2]) : null;
}

/**
 * Two clock times → an interval: an end earlier than the start is the next day's (22:00–02:00), and
 * an end of 00:00 or 24:00 is midnight. Null when either is malformed or the end equals the start
 * (an interval of no time; a whole day is 00:00–24:00).
 */
export function intervalOf(start: string, end: string): Interval | null {
  const s = minuteOfClock(start);
  const e = minuteOfClock(end, true);
  if (s === null || e === null || s === e) return null;
  return { start: s, end: e <= s ? e + 1440 : e };
}

/** An interval as clock times: { 1320, 1560 } → 22:00–02:00; an end at midnight is "24:00". */
export function clocksOf(interval: Interval): { start: string; end: string } {
  return { start: clockOf(interval.start), end: clockOf(interval.end > 1440 ? interval.end - 1440 : interval.end) };
}

/** True when the interval runs past midnight into the next day. */
export const crossesMidnight = (interval: Interval) => interval.end > 1440;

/** "22:00–02:00" */
export const describeInterval = (interval: Interval) => {
  const c = clocksOf(interval);
  return `${c.start}–${c.end}`;
};

// ---------------------------------------------------------------------------------------------
// Calendar days (numbered from 1970-01-01, the local date of the location)
// ---------------------------------------------------------------------------------------------

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** "2026-12-25" → its day number, or null unless the date is on the calendar. */
export function dayOfDate(date: string): number | null {
  const m = DATE.exec(date);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(y, mo - 1, d);
  const back = new Date(ms);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return null;
  return ms / DAY;
}

export const dateOfDay = (day: number) => new Date(day * DAY).toISOString().slice(0, 10);

/** The weekday of a day number (1970-01-01 was a Thursday). */
export const weekdayOfDay = (day: number): Weekday => WEEKDAYS[(((day + 3) % 7) + 7) % 7]!;

const capitalised = (day: Weekday) => day.charAt(0).toUpperCase() + day.slice(1);

// ---------------------------------------------------------------------------------------------
// Validation: what the API refuses (422), with where
// ---------------------------------------------------------------------------------------------

export type ScheduleIssue = { path: (string | number)[]; message: string };

const overlaps = (a: { from: number; to: number }, b: { from: number; to: number }) =>
  Math.max(a.from, b.from) < Math.min(a.to, b.to);

/**
 * Intervals that overlap, and exception dates listed twice. Each interval is checked against the
 * rest of its day, the previous day's interval that runs past midnight into it, and the next day
 * it runs into; the weekly schedule wraps from Sunday night into Monday. Touching intervals
 * (12:00 end, 12:00 start) are fine. Each issue points at the later interval of a pair.
 */
export function scheduleIssues(schedule: Schedule): ScheduleIssue[] {
  const issues: ScheduleIssue[] = [];
  const WEEK = 7 * 1440;

  // The week as a circle of minutes from Monday 00:00.
  const week = WEEKDAYS.flatMap((day, w) =>
    schedule.weekly[day].map((interval, j) => ({
      path: ['weekly', day, j],
      label: `${capitalised(day)} ${describeInterval(interval)}`,
      from: w * 1440 + interval.start,
      to: w * 1440 + interval.end,
    })),
  ).sort((a, b) => a.from - b.from);
  const flagged = new Set<number>();
  const flag = (item: (typeof week)[number], index: number, other: (typeof week)[number]) => {
    if (flagged.has(index)) return;
    flagged.add(index);
    issues.push({ path: item.path, message: `overlaps ${other.label}` });
  };
  for (let k = 1; k < week.length; k++) {
    for (let i = 0; i < k; i++) {
      const [a, b] = [week[i]!, week[k]!];
      // Reported at the later of the two; for Sunday night running into Monday, at Monday's.
      if (overlaps(a, b)) flag(b, k, a);
      else if (overlaps(a, { from: b.from - WEEK, to: b.to - WEEK })) flag(a, i, b);
    }
  }

  const byDay = new Map<number, { index: number; hours: DatedHours }>();
  schedule.exceptions.forEach((hours, index) => {
    const day = dayOfDate(hours.date);
    if (day === null) return; // the contract refuses it with its own message
    const first = byDay.get(day);
    if (first) issues.push({ path: ['exceptions', index, 'date'], message: `${hours.date} is already listed` });
    else byDay.set(day, { index, hours });
  });
  /** A date's intervals and how to name them: its exception's, else its weekday's. */
  const dayHours = (day: number) => {
    const exception = byDay.get(day);
    return exception
      ? { intervals: exception.hours.intervals, name: dateOfDay(day) }
      : { intervals: schedule.weekly[weekdayOfDay(day)], name: capitalised(weekdayOfDay(day)) };
  };
  for (const [day, { index, hours }] of byDay) {
    const own = hours.intervals.map((interval, j) => ({ interval, j, from: interval.start, to: interval.end }));
    const flag = new Set<number>();
    const report = (j: number, message: string) => {
      if (flag.has(j)) return;
      flag.add(j);
      issues.push({ path: ['exceptions', index, 'intervals', j], message });
    };
    const sorted = [...own].sort((a, b) => a.from - b.from || a.j - b.j);
    for (let k = 1; k < sorted.length; k++) {
      for (let i = 0; i < k; i++) {
        if (overlaps(sorted[i]!, sorted[k]!)) report(sorted[k]!.j, `overlaps ${describeInterval(sorted[i]!.interval)}`);
      }
    }
    const before = dayHours(day - 1);
    for (const prev of before.intervals.filter(crossesMidnight)) {
      for (const o of own) {
        if (overlaps(o, { from: 0, to: prev.end - 1440 })) {
          report(o.j, `overlaps ${before.name} ${describeInterval(prev)}, which runs past midnight`);
        }
      }
    }
    // The next date is checked here only when it follows the weekly schedule; an exception there
    // checks this one as its previous day.
    if (byDay.has(day + 1)) continue;
    const after = dayHours(day + 1);
    for (const o of own.filter((x) => crossesMidnight(x.interval))) {
      for (const next of after.intervals) {
        if (overlaps({ from: 0, to: o.to - 1440 }, { from: next.start, to: next.end })) {
          report(o.j, `runs past midnight into ${after.name} ${describeInterval(next)}`);
        }
      }
    }
  }
  return issues;
}

/** The schedule as stored and answered: each day's intervals by start, exceptions by date. */
export function normalizeSchedule(schedule: Schedule): Schedule {
  const byStart = (list: Interval[]) => [...list].sort((a, b) => a.start - b.start);
  return {
    weekly: Object.fromEntries(WEEKDAYS.map((d) => [d, byStart(schedule.weekly[d] ?? [])])) as WeeklyHours,
    exceptions: [...schedule.exceptions]
      .sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0))
      .map((e) => ({ date: e.date, name: e.name ?? null, intervals: byStart(e.intervals) })),
  };
}

// ---------------------------------------------------------------------------------------------
// The clock
// ---------------------------------------------------------------------------------------------

/**
 * The first instant at which `timeZone`'s clock shows `naive` (a local date and time written as if
 * it were UTC, in ms) or later: the moment the clock reaches it. A time shown twice (clocks going
 * back) is reached the first time; a time the clocks skip is reached when they jump past it.
 * Assumes one offset change at most within a day of it, as every zone has.
 */
function firstReach(timeZone: string, naive: number): number {
  const before = offsetAt(timeZone, naive - DAY);
  const after = offsetAt(timeZone, naive + DAY);
  if (before === after) return naive - before;
  const shown = [before, after].filter((o) => offsetAt(timeZone, naive - o) === o).map((o) => naive - o);
  if (shown.length > 0) return Math.min(...shown);
  // Skipped: the first minute on the later offset. Between these two the offset changes.
  let lo = naive - after;
  let hi = naive - before;
  if (!(lo < hi) || offsetAt(timeZone, hi) !== after) return naive - before;
  while (hi - lo > MINUTE) {
    const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE;
    if (offsetAt(timeZone, mid) === after) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** An open period, in ms since the epoch: [start, end); `end` Infinity: it never closes. */
type Period = [start: number, end: number];

export type OpeningClock = {
  readonly timeZone: string;
  /** Open at this instant. */
  isOpen(at: Date): boolean;
  /** The first instant ≥ `after` at which a closed time ends (`after` itself if it opens then); null if it never opens again. */
  nextOpening(after: Date): Date | null;
  /** The first instant ≥ `after` at which an open time ends (`after` itself if it closes then); null if it never closes. */
  nextClosing(after: Date): Date | null;
  /**
   * The last instant ≤ `before` at which an open time ended (`before` itself if it closes then);
   * null if it was never open before. While closed, the closed period began then.
   */
  previousClosing(before: Date): Date | null;
  /** Seconds of [from, to) during which it is open (0 when `to` is not after `from`); fractional when the instants are. */
  businessSeconds(from: Date, to: Date): number;
  /** The open periods within [from, to), cut to it, in order. */
  openPeriods(from: Date, to: Date): { start: Date; end: Date }[];
};

/** The clock of a schedule in its time zone (an invalid zone throws a RangeError, as Intl does). */
export function openingClock(hours: OpeningHours): OpeningClock {
  const { timeZone } = hours;
  wallClock(timeZone, new Date(0)); // an unknown zone throws here, not at the first question
  const weekly = WEEKDAYS.map((d) => hours.weekly[d] ?? []);
  const exceptions = new Map<number, Interval[]>();
  for (const e of hours.exceptions) {
    const day = dayOfDate(e.date);
    if (day !== null && !exceptions.has(day)) exceptions.set(day, e.intervals);
  }
  const exceptionDays = [...exceptions.keys()].sort((a, b) => a - b);
  /** The first exception date on or after `day`. */
  const nextException = (day: number): number | undefined => {
    let [lo, hi] = [0, exceptionDays.length];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (exceptionDays[mid]! < day) lo = mid + 1;
      else hi = mid;
    }
    return exceptionDays[lo];
  };
  const weeklyEmpty = weekly.every((list) => list.length === 0);

  type Day = { start: number; periods: Period[] };
  const days = new Map<number, Day>();
  /** A local date: the instant it starts and the open periods of the intervals that start on it. */
  const dayOf = (day: number): Day => {
    let found = days.get(day);
    if (found) return found;
    const base = day * DAY;
    // No offset change from the day before to two days after (most days): plain arithmetic.
    const o1 = offsetAt(timeZone, base - DAY);
    const o2 = offsetAt(timeZone, base + 3 * DAY);
    const reach =
      o1 === o2
        ? (minute: number) => base + minute * MINUTE - o1
        : (minute: number) => firstReach(timeZone, base + minute * MINUTE);
    const intervals = exceptions.get(day) ?? weekly[(((day + 3) % 7) + 7) % 7]!;
    const periods = intervals
      .map((i): Period => [reach(i.start), reach(i.end)])
      .filter(([s, e]) => s < e)
      .sort((a, b) => a[0] - b[0]);
    found = { start: reach(0), periods };
    if (days.size > 1000) days.clear();
    days.set(day, found);
    return found;
  };
  const localDay = (t: number) => {
    const w = wallClock(timeZone, new Date(t));
    return Date.UTC(w.year, w.month - 1, w.day) / DAY;
  };

  /**
   * The open periods from the intervals of `fromDay` on, merged where they touch or overlap, in
   * order, without end. The first may have started before `fromDay` (its start is then that
   * day's, not the true one); the last, when it never closes, ends at Infinity and the list there.
   */
  function* periods(fromDay: number): Generator<Period> {
    let current: Period | null = null;
    for (let day = fromDay; ; day++) {
      // Every later period starts at or after this day's start.
      if (current && current[1] < dayOf(day).start) {
        yield current;
        current = null;
      }
      const upcoming = nextException(day);
      if (!current && weeklyEmpty) {
        // Nothing opens before the next exception, and nothing at all after the last.
        if (upcoming === undefined) return;
        day = upcoming;
      } else if (current && (upcoming === undefined || upcoming > day) && current[0] <= dayOf(day - 15).start) {
        const before = nextException(day - 16);
        if (before === undefined || before >= day) {
          // Open through fifteen days of the weekly schedule alone: it covers the whole week, so it
          // stays open until the next exception (never closing without one). The days in between
          // are skipped, the last two read for what runs past midnight.
          if (upcoming === undefined) {
            yield [current[0], Infinity];
            return;
          }
          if (upcoming - 1 > day) {
            day = upcoming - 1;
            for (const p of [...dayOf(day - 2).periods, ...dayOf(day - 1).periods]) current[1] = Math.max(current[1], p[1]);
            current[1] = Math.max(current[1], dayOf(day).start);
          }
        }
      }
      for (const p of dayOf(day).periods) {
        if (!current) current = [p[0], p[1]];
        else if (p[0] <= current[1]) current[1] = Math.max(current[1], p[1]);
        else {
          yield current;
          current = [p[0], p[1]];
        }
      }
    }
  }

  /** The day to start from so that any period around `t` is seen (a period belongs to the day before at most). */
  const scanFrom = (t: number) => localDay(t) - 2;

  return {
    timeZone,
    isOpen(at) {
      const t = at.getTime();
      const today = localDay(t);
      for (let day = today - 2; day <= today + 1; day++) {
        if (dayOf(day).periods.some(([s, e]) => s <= t && t < e)) return true;
      }
      return false;
    },
    nextOpening(after) {
      const t = after.getTime();
      for (const [s] of periods(scanFrom(t))) if (s >= t) return new Date(s);
      return null;
    },
    nextClosing(after) {
      const t = after.getTime();
      for (const [, e] of periods(scanFrom(t))) {
        if (e === Infinity) return null;
        if (e >= t) return new Date(e);
      }
      return null;
    },
    previousClosing(before) {
      const t = before.getTime();
      const today = localDay(t);
      // Far enough back that a closing must be found if there is one: ten days before the first
      // exception or today, whichever is earlier (the weekly schedule alone closes within a week).
      const earliest = Math.min(today, exceptionDays[0] ?? today) - 10;
      for (let back = 8; ; back *= 4) {
        const from = Math.max(today - back, earliest);
        let last: number | null = null;
        for (const [s, e] of periods(from)) {
          if (s > t || e > t) break;
          last = e;
        }
        // Read from `from`, a closing is certain once it is two days past it (an interval of an
        // earlier date, not read, ends within a day of its own, a daylight-saving hour aside): an
        // earlier one may be cut short by such an interval, so then look further back.
        if (from === earliest || (last !== null && last >= dayOf(from + 3).start)) return last === null ? null : new Date(last);
      }
    },
    businessSeconds(from, to) {
      const [a, b] = [from.getTime(), to.getTime()];
      let ms = 0;
      if (!(b > a)) return 0;
      for (const [s, e] of periods(scanFrom(a))) {
        if (s >= b) break;
        ms += Math.max(0, Math.min(e, b) - Math.max(s, a));
      }
      return ms / 1000;
    },
    openPeriods(from, to) {
      const [a, b] = [from.getTime(), to.getTime()];
      const out: { start: Date; end: Date }[] = [];
      if (!(b > a)) return out;
      for (const [s, e] of periods(scanFrom(a))) {
        if (s >= b) break;
        if (e <= a) continue;
        out.push({ start: new Date(Math.max(s, a)), end: new Date(Math.min(e, b)) });
      }
      return out;
    },
  };
}
