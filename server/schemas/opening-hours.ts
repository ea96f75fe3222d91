import { z } from 'zod';
import {
  clocksOf,
  intervalOf,
  MAX_EXCEPTION_NAME,
  MAX_EXCEPTIONS,
  MAX_INTERVALS_PER_DAY,
  normalizeSchedule,
  OPENING_HOURS_SOURCES,
  scheduleIssues,
  WEEKDAYS,
  type Interval,
  type Schedule,
  type WeeklyHours,
} from '@/server/shared/opening-hours';
import { isoTimestamp, timestampOut } from './common';

/**
 * Opening hours (docs/api.md#opening-hours): a weekly schedule and dated exceptions, as clock times
 * in the location's time zone. The contract checks each time's format, each list's length, each
 * date on the calendar and every overlap (server/shared/opening-hours.ts), so a 422 names the
 * field; the service receives the schedule in minutes.
 */

/** The calendar the clock answers for: dates and instants outside it are 422s. */
const FIRST_DATE = '1970-01-01';
const LAST_DATE = '2199-12-31';

const START = /^(?:[01]\d|2[0-3]):[0-5]\d$/;
const END = /^(?:(?:[01]\d|2[0-3]):[0-5]\d|24:00)$/;

const Start = z
  .string()
  .max(5)
  .regex(START, 'must be a time of day, HH:MM from 00:00 to 23:59')
  .meta({ description: 'Local time it opens, HH:MM', example: '09:00' });
const End = z.string().max(5).regex(END, 'must be a time of day, HH:MM from 00:00 to 24:00').meta({
  description:
    'Local time it closes (exclusive), HH:MM. At or before `start`: the next day (22:00–02:00); 24:00 or 00:00: midnight',
  example: '17:00',
});

export const OpeningIntervalInput = z
  .object({ start: Start, end: End })
  .superRefine((v, ctx) => {
    if (v.start === v.end || (v.start === '00:00' && v.end === '00:00')) {
      ctx.addIssue({ code: 'custom', path: ['end'], message: 'must differ from start (a whole day is 00:00–24:00)' });
    }
  })
  .meta({ id: 'OpeningIntervalInput' });

const DayInput = z
  .array(OpeningIntervalInput)
  .max(MAX_INTERVALS_PER_DAY)
  .default([])
  .meta({ description: `Up to ${MAX_INTERVALS_PER_DAY} intervals; none or omitted: closed that day` });

const WeeklyInput = z
  .strictObject({
    monday: DayInput,
    tuesday: DayInput,
    wednesday: DayInput,
    thursday: DayInput,
    friday: DayInput,
    saturday: DayInput,
    sunday: DayInput,
  })
  .meta({ id: 'WeeklyHoursInput', description: 'Intervals by the day they start on; a day left out is closed' });

const ExceptionInput = z
  .object({
    date: z.iso
      .date('must be a date on the calendar, YYYY-MM-DD')
      .max(10)
      .refine((d) => d >= FIRST_DATE && d <= LAST_DATE, `must be from ${FIRST_DATE} to ${LAST_DATE}`)
      .meta({ example: '2026-12-25' }),
    name: z.string().trim().max(MAX_EXCEPTION_NAME).nullish().meta({ example: 'Christmas Day' }),
    intervals: DayInput.meta({
      description: "The date's hours instead of its weekday's; none or omitted: closed all day",
    }),
  })
  .meta({ id: 'OpeningHoursExceptionInput' });

const intervals = (list: { start: string; end: string }[]) =>
  list.map((i) => intervalOf(i.start, i.end)).filter((i): i is Interval => i !== null);

/** The wire's clock times → the clock's schedule; an interval the checks above refuse is left out. */
function toSchedule(input: {
  weekly: Record<string, { start: string; end: string }[]>;
  exceptions: z.output<typeof ExceptionInput>[];
}): Schedule {
  return {
    weekly: Object.fromEntries(WEEKDAYS.map((d) => [d, intervals(input.weekly[d] ?? [])])) as WeeklyHours,
    exceptions: input.exceptions.map((e) => ({ date: e.date, name: e.name || null, intervals: intervals(e.intervals) })),
  };
}

/** PUT body: the whole schedule, which replaces the stored one. Answered sorted (intervals by start, exceptions by date). */
export const OpeningHoursInput = z
  .object({
    weekly: WeeklyInput,
    exceptions: z
      .array(ExceptionInput)
      .max(MAX_EXCEPTIONS)
      .default([])
      .meta({ description: `Dated exceptions (holidays, special hours), one per date, up to ${MAX_EXCEPTIONS}` }),
  })
  .superRefine((input, ctx) => {
    for (const issue of scheduleIssues(toSchedule(input)))
      ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  })
  .transform((input) => normalizeSchedule(toSchedule(input)))
  .meta({ id: 'OpeningHoursInput' });

export type OpeningHoursBody = z.input<typeof OpeningHoursInput>;

const IntervalOut = z
  .object({
    start: z.string().meta({ example: '22:00' }),
    end: z.string().meta({ example: '02:00' }),
    overnight: z.boolean().meta({ description: 'The interval runs past midnight into the next day' }),
  })
  .meta({ id: 'OpeningInterval' });

const intervalOut = (i: Interval) => ({ ...clocksOf(i), overnight: i.end > 1440 });

export const OpeningHoursResponse = z
  .object({
    business_id: z.number().int(),
    location_id: z.number().int().nullable().meta({ description: "null: the business's own hours" }),
    source: z.enum(OPENING_HOURS_SOURCES).meta({
      description:
        "Whose hours these are: the location's own, the business's (which a location without its own keeps to), or the default (none set: open around the clock)",
    }),
    time_zone: z.string().meta({ description: "The IANA time zone the times are read in: the location's, else the business's" }),
    weekly: z.object(
      Object.fromEntries(WEEKDAYS.map((d) => [d, z.array(IntervalOut)])) as Record<
        (typeof WEEKDAYS)[number],
        z.ZodArray<typeof IntervalOut>
      >,
    ),
    exceptions: z.array(
      z.object({
        date: z.string().meta({ example: '2026-12-25' }),
        name: z.string().nullable(),
        intervals: z.array(IntervalOut),
      }),
    ),
    status: z
      .object({
        at: timestampOut.meta({ description: 'The instant described: `at` of the query, else now' }),
        open: z.boolean(),
        next_opening: timestampOut.nullable().meta({ description: 'The next instant at or after `at` it opens; null: never' }),
        next_closing: timestampOut.nullable().meta({ description: 'The next instant at or after `at` it closes; null: never' }),
      })
      .meta({ id: 'OpeningStatus' }),
  })
  .meta({ id: 'OpeningHours' });

/** The schedule as the API answers it. */
export const scheduleOut = (s: Schedule) => ({
  weekly: Object.fromEntries(WEEKDAYS.map((d) => [d, s.weekly[d].map(intervalOut)])) as Record<
    (typeof WEEKDAYS)[number],
    ReturnType<typeof intervalOut>[]
  >,
  exceptions: s.exceptions.map((e) => ({ date: e.date, name: e.name, intervals: e.intervals.map(intervalOut) })),
});

export const OpeningHoursQuery = z.object({
  at: isoTimestamp
    .refine((d) => d.getUTCFullYear() >= 1970 && d.getUTCFullYear() < 2200, `must be from ${FIRST_DATE} to ${LAST_DATE}`)
    .optional()
    .meta({ description: `Describe the status at this instant instead of now (ISO 8601, ${FIRST_DATE} to ${LAST_DATE})` }),
});
