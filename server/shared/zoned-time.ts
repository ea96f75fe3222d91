/**
 * Wall-clock times in a named time zone, for Send later's quick picks (docs/api.md#send-later):
 * "tomorrow 9:00" means 9:00 where the business (or its location) is, not where staff's browser
 * is. Browser-safe: Intl only.
 */

type Wall = { year: number; month: number; day: number; hour: number; minute: number; weekday: number };

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/**
 * One formatter per zone: building an Intl.DateTimeFormat costs far more than using one, and quiet
 * hours read the clock of every recipient of a 1,000-text request.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      weekday: 'short',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** What the clock and calendar show in `timeZone` at `at`. */
export function wallClock(timeZone: string, at: Date): Wall {
  const parts = formatterOf(timeZone).formatToParts(at);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return {
    year: Number(get('year')),
    month: Number(get('month')),
    day: Number(get('day')),
    hour: Number(get('hour')),
    minute: Number(get('minute')),
    weekday: WEEKDAYS.indexOf(get('weekday')),
  };
}

/** How far `timeZone`'s clock is ahead of UTC at `at` (ms since the epoch, read to the minute), in ms. */
export function offsetAt(timeZone: string, at: number): number {
  const w = wallClock(timeZone, new Date(at));
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute) - Math.floor(at / 60_000) * 60_000;
}

/**
 * The instant at which `timeZone`'s clock shows the given date and time. Around a daylight-saving
 * change the time is read as PostgreSQL reads it (so the inbox and the database agree): a time the
 * clocks skipped, and a time they show twice, are read in standard time (the smaller offset), so
 * 02:30 on a spring-forward night is 03:30 daylight time and 01:30 on a fall-back night the later one.
 */
export function zonedInstant(timeZone: string, year: number, month: number, day: number, hour: number, minute: number): Date {
  const target = Date.UTC(year, month - 1, day, hour, minute);
  const DAY = 86_400_000;
  const before = offsetAt(timeZone, target - DAY);
  const after = offsetAt(timeZone, target + DAY);
  if (before === after) return new Date(target - before);
  const shows = (offset: number) => offsetAt(timeZone, target - offset) === offset;
  const [earlier, later] = [shows(before), shows(after)];
  if (earlier !== later) return new Date(target - (earlier ? before : after));
  return new Date(target - Math.min(before, after));
}

/** The calendar date `days` after the one `timeZone` shows at `now`, at hour:00 there. */
function daysAhead(timeZone: string, now: Date, days: number, hour: number): Date {
  const today = wallClock(timeZone, now);
  const date = new Date(Date.UTC(today.year, today.month - 1, today.day + days));
  return zonedInstant(timeZone, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), hour, 0);
}

/** Send later's quick picks: tomorrow 9:00 and the next Monday 9:00, in `timeZone`. */
export function quickPicks(timeZone: string, now: Date = new Date()): { label: string; at: Date }[] {
  const weekday = wallClock(timeZone, now).weekday;
  const toMonday = ((8 - weekday) % 7 || 7) as number;
  return [
    { label: 'Tomorrow 9:00', at: daysAhead(timeZone, now, 1, 9) },
    { label: 'Monday 9:00', at: daysAhead(timeZone, now, toMonday, 9) },
  ];
}

/** A `datetime-local` value (`2026-11-26T09:00`), read as a time in `timeZone`; null if malformed. */
export function fromLocalInput(timeZone: string, value: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(value);
  if (!m) return null;
  const [, y, mo, d, h, mi] = m.map(Number) as [number, number, number, number, number, number];
  return zonedInstant(timeZone, y, mo, d, h, mi);
}

/** "Thu, Nov 26, 9:00 AM" as `timeZone` shows it. */
export function formatInZone(timeZone: string, at: Date | string): string {
  return new Intl.DateTimeFormat(undefined, {
    timeZone,
    weekday: 'short',
    month: 'short',
    day: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
  }).format(new Date(at));
}
