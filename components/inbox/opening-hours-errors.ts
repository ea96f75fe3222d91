import { WEEKDAYS, type Weekday } from '@/server/shared/opening-hours';

/**
 * The API's refusals of an opening-hours schedule (docs/api.md#opening-hours), in the words of the
 * settings page: `['body', 'weekly', 'friday', 1, 'end']` → "Friday, interval 2, until: …". Pure,
 * so it is tested without a browser.
 */

type Issue = { loc: readonly unknown[]; msg: string };

const FIELD_WORDS: Record<string, string> = { start: 'from', end: 'until', date: 'date', name: 'name', intervals: 'hours' };

const dayName = (day: Weekday) => day.charAt(0).toUpperCase() + day.slice(1);

/** Where in the schedule an issue points, as the page names it; `dates` are the exceptions' dates in the order sent. */
export function placeOf(loc: readonly unknown[], dates: readonly string[]): string {
  const path = loc[0] === 'body' ? loc.slice(1) : loc;
  const parts: string[] = [];
  let rest: readonly unknown[] = [];
  if (path[0] === 'weekly' && (WEEKDAYS as readonly unknown[]).includes(path[1])) {
    parts.push(dayName(path[1] as Weekday));
    rest = path.slice(2);
  } else if (path[0] === 'exceptions' && typeof path[1] === 'number') {
    const date = dates[path[1]];
    parts.push(`Date ${path[1] + 1}${date ? ` (${date})` : ''}`);
    rest = path.slice(2);
    if (rest[0] === 'intervals' && typeof rest[1] === 'number') rest = rest.slice(1);
  } else {
    parts.push(path[0] === 'exceptions' ? 'Dates' : 'Opening hours');
  }
  if (typeof rest[0] === 'number') {
    parts.push(`interval ${rest[0] + 1}`);
    rest = rest.slice(1);
  }
  if (typeof rest[0] === 'string') parts.push(FIELD_WORDS[rest[0]] ?? rest[0]);
  return parts.join(', ');
}

/** A failed save in sentences: each issue with its place, else the error's own message. */
export function hoursErrors(error: { message: string; data?: unknown } | null | undefined, dates: readonly string[]): string[] {
  if (!error) return [];
  const issues = (error.data as { issues?: Issue[] | null } | undefined)?.issues;
  if (issues?.length) return issues.map((i) => `${placeOf(i.loc, dates)}: ${i.msg}`);
  return [error.message];
}

/** The issues' places as keys (`weekly.friday.1`, `exceptions.0`), to mark the rows they point at. */
export function invalidKeys(error: { data?: unknown } | null | undefined): Set<string> {
  const issues = (error?.data as { issues?: Issue[] | null } | undefined)?.issues ?? [];
  const keys = new Set<string>();
  for (const { loc } of issues) {
    const path = loc[0] === 'body' ? loc.slice(1) : loc;
    if (path[0] === 'weekly') keys.add(`weekly.${String(path[1])}.${String(path[2])}`);
    if (path[0] === 'exceptions') keys.add(`exceptions.${String(path[1])}`);
  }
  return keys;
}
