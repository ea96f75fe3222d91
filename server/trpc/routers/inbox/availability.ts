import { z } from 'zod';
import { parseOrThrow } from '@/server/http/validation';
import { id } from '@/server/schemas/common';
import { OpeningHoursInput } from '@/server/schemas/opening-hours';
import { SetAvailabilityRequest } from '@/server/schemas/staff-availability';
import { getAvailability, setAvailability, setStaffSchedule, staffOf, staffSchedules } from '@/server/services/staff-schedules';
import { STAFF_MANAGER_ROLES } from '@/server/shared/staff-availability';
import { actorOfCaller, requireRole, requireSelfOrRole } from '@/server/web/staff-context';
import { staffProcedure } from '../../init';

/**
 * Who is available, in the inbox (docs/api.md#staff-availability): the top bar's Away switch and
 * the colleagues' states, and the Staff schedules page. The same services and rules as REST: one's
 * own Away switch and schedule, a colleague's or a capacity with the owner or manager role.
 */
export const availabilityProcedures = {
  /** Every active staff member's state now; the live stream's `staff.updated` frame refetches it. */
  availability: staffProcedure.query(({ ctx }) => getAvailability(ctx.caller.businessId)),
  /** The signed-in staff member's Away switch. */
  setAway: staffProcedure
    .input(z.object({ away: z.boolean() }))
    .mutation(({ ctx, input }) =>
      setAvailability(ctx.caller.businessId, ctx.caller.staffId, { away: input.away }, actorOfCaller(ctx.caller)),
    ),
  staffSchedules: staffProcedure.query(({ ctx }) => staffSchedules(ctx.caller.businessId)),
  /**
   * A staff member's own schedule (checked with REST's contract, so a refusal carries the same
   * issues for the page to put in words), or null: they follow their location's opening hours.
   */
  setStaffSchedule: staffProcedure.input(z.object({ staffId: id, hours: z.unknown() })).mutation(async ({ ctx, input }) => {
    const schedule = input.hours === null ? null : parseOrThrow('body', OpeningHoursInput, input.hours);
    await staffOf(ctx.caller.businessId, input.staffId);
    await requireSelfOrRole(ctx.caller, input.staffId, STAFF_MANAGER_ROLES);
    return setStaffSchedule(ctx.caller.businessId, input.staffId, schedule);
  }),
  setStaffCapacity: staffProcedure
    .input(z.object({ staffId: id, capacity: SetAvailabilityRequest.shape.capacity.unwrap() }))
    .mutation(async ({ ctx, input }) => {
      await staffOf(ctx.caller.businessId, input.staffId);
      await requireRole(ctx.caller, STAFF_MANAGER_ROLES);
      return setAvailability(ctx.caller.businessId, input.staffId, { capacity: input.capacity }, actorOfCaller(ctx.caller));
    }),
};
