import { MAX_REPORT_DAYS } from '@/server/shared/reports';
import { wallClock, zonedInstant } from '@/server/shared/zoned-time';

/**
 * The Reports page's range (docs/architecture.md#reports-page): days as the page shows them, read on
 * the clock the report reads its days on — the location's when one is chosen, else the business's —
 * and the instants sent for them. Pure (Intl only), tested beside it.
 */

/** Days, as YYYY-MM-DD: `to` is the last day included. */
export type DayRange = { from: string; to: string };

const DAY = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The calendar date `timeZone` shows at `now`, moved by `days`, as YYYY-MM-DD. */
export function dayIn(timeZone: string, days = 0, now: Date = new Date()): string {
  const w = wallClock(timeZone, now);
  return new Date(Date.UTC(w.year, w.month - 1, w.day + days)).toISOString().slice(0, 10);
}

/** The last `days` days, today included, on `timeZone`'s clock. */
export function lastDays(timeZone: string, days: number, now: Date = new Date()): DayRange {
  return { from: dayIn(timeZone, 1 - days, now), to: dayIn(timeZone, 0, now) };
}

/** A YYYY-MM-DD on the calendar, as its UTC midnight; null if it is not one. */
function calendarDay(ymd: string): number | null {
  const m = DATE.exec(ymd);
  if (!m) return null;
  const at = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return new Date(at).toISOString().slice(0, 10) === ymd ? at : null;
}

/** Midnight starting a day (a UTC midnight standing for the date) on `timeZone`'s clock. */
function midnight(timeZone: string, day: number): Date {
  const d = new Date(day);
  return zonedInstant(timeZone, d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), 0, 0);
}

/**
 * What the page asks for: from the first day's midnight to the midnight after the last, on
 * `timeZone`'s clock; or why not, in the contract's own terms (the server's 422 at `to`), so a range
 * the page takes is one the server takes — 366 days across a daylight-saving change that adds an
 * hour are longer than 366 × 24 hours, and refused by both.
 */
export function rangeQuery(range: DayRange, timeZone: string): { from: string; to: string } | { error: string } {
  const [first, last] = [calendarDay(range.from), calendarDay(range.to)];
  if (first === null || last === null) return { error: 'Choose both dates.' };
  if (last < first) return { error: 'The end date must be on or after the start date.' };
  const [from, to] = [midnight(timeZone, first), midnight(timeZone, last + DAY)];
  if (to.getTime() - from.getTime() > MAX_REPORT_DAYS * DAY) return { error: `A report covers at most ${MAX_REPORT_DAYS} days.` };
  return { from: from.toISOString(), to: to.toISOString() };
}
