import { z } from 'zod';
import { MAX_CAPACITY, STAFF_SCHEDULE_SOURCES } from '@/server/shared/staff-availability';
import { idParam, timestampOut } from './common';
import { OpeningHoursResponse } from './opening-hours';

/**
 * Staff availability over REST (docs/api.md#staff-availability). A staff member's schedule has
 * opening hours' shape and rules, so its body is OpeningHoursInput and its `?at=` OpeningHoursQuery
 * (server/schemas/opening-hours.ts): one validation for every schedule.
 */

export const staffPath = z.object({ business_id: idParam, staff_id: idParam });

export const StaffScheduleResponse = OpeningHoursResponse.pick({
  business_id: true,
  time_zone: true,
  weekly: true,
  exceptions: true,
})
  .extend({
    staff_id: z.number().int(),
    location_id: z.number().int().nullable().meta({ description: 'Their location; null: none (the business’s hours apply)' }),
    source: z.enum(STAFF_SCHEDULE_SOURCES).meta({
      description:
        'Whose schedule is in force: their own, else the opening hours of their location (`location`), of the business (`business`), or the default (`default`: around the clock)',
    }),
    status: z
      .object({
        at: timestampOut.meta({ description: 'The instant described: `at` of the query, else now' }),
        on_shift: z.boolean(),
        next_shift_start: timestampOut
          .nullable()
          .meta({ description: 'The next instant at or after `at` a shift starts; null: never' }),
        next_shift_end: timestampOut
          .nullable()
          .meta({ description: 'The next instant at or after `at` a shift ends; null: never' }),
      })
      .meta({ id: 'ShiftStatus' }),
  })
  .meta({ id: 'StaffSchedule' });

const capacity = z
  .number({ error: `must be an integer from 0 to ${MAX_CAPACITY}` })
  .int(`must be an integer from 0 to ${MAX_CAPACITY}`)
  .min(0, `must be an integer from 0 to ${MAX_CAPACITY}`)
  .max(MAX_CAPACITY, `must be an integer from 0 to ${MAX_CAPACITY}`);

/** Nothing to change is a mistake worth a 422, not a silent 200. */
export const SetAvailabilityRequest = z
  .strictObject({
    away: z.boolean().optional().meta({ description: 'The Away switch: true while they are away from the inbox' }),
    capacity: capacity
      .nullable()
      .optional()
      .meta({
        description: `The most conversations waiting for their reply that auto-assignment gives them, 0 to ${MAX_CAPACITY}; null: the business's default`,
      }),
  })
  .superRefine((body, ctx) => {
    if (body.away === undefined && body.capacity === undefined)
      ctx.addIssue({ code: 'custom', message: 'give at least one of away or capacity', params: { type: 'missing' } });
  })
  .meta({ id: 'SetAvailabilityRequest' });

export const StaffAvailability = z
  .object({
    staff_id: z.number().int(),
    name: z.string(),
    location_id: z.number().int().nullable(),
    away: z.boolean(),
    away_changed_at: timestampOut.nullable().meta({ description: 'When the Away switch last changed; null: never' }),
    on_shift: z.boolean().meta({ description: 'Within their schedule at `at`' }),
    available: z.boolean().meta({ description: 'On shift and not away: auto-assignment may give them conversations' }),
    schedule_source: z.enum(STAFF_SCHEDULE_SOURCES).meta({ description: 'Whose schedule they work (see StaffSchedule)' }),
    next_shift_change: timestampOut
      .nullable()
      .meta({ description: 'The next instant after `at` when `on_shift` flips; null: never' }),
    capacity: z.number().int().meta({ description: 'The capacity in force: their own, else the business’s default' }),
    capacity_source: z.enum(['own', 'business']),
    waiting: z
      .number()
      .int()
      .meta({ description: 'Open conversations assigned to them that wait for a reply (docs: Waiting for a reply), now' }),
  })
  .meta({ id: 'StaffAvailability' });

export const AvailabilityResponse = z
  .object({
    at: timestampOut.meta({ description: 'The instant `on_shift` is read at: `at` of the query, else now' }),
    staff: z.array(StaffAvailability).meta({ description: 'Every active staff member, by name' }),
  })
  .meta({ id: 'Availability' });
