import { OPENING_HOURS_SOURCES } from './opening-hours';

/**
 * Staff availability's shared names and bounds (docs/api.md#staff-availability): pure, so the
 * contract, the services and the inbox (the top bar's Away switch, the colleagues' states, the
 * Staff schedules page) state the same rules.
 */

/** The most conversations waiting for one staff member's reply a capacity may allow (the column's check). */
export const MAX_CAPACITY = 1000;

/**
 * Whose hours a staff member works: their own schedule, else their workplace's opening hours
 * (their location's own, the business's, or the default: around the clock).
 */
export const STAFF_SCHEDULE_SOURCES = ['own', ...OPENING_HOURS_SOURCES] as const;
export type StaffScheduleSource = (typeof STAFF_SCHEDULE_SOURCES)[number];

/**
 * Who may change a colleague's schedule or Away switch, or anyone's capacity, with a staff session
 * (docs/api.md#staff-sessions, Roles). Everyone may set their own schedule and Away switch.
 */
export const STAFF_MANAGER_ROLES = ['owner', 'manager'] as const;

/** One word for a staff member's state, as the inbox shows it: away wins over off shift. */
export function availabilityState(s: { away: boolean; on_shift: boolean }): 'Available' | 'Away' | 'Off shift' {
  if (s.away) return 'Away';
  return s.on_shift ? 'Available' : 'Off shift';
}
