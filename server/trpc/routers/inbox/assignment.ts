import { z } from 'zod';
import { id } from '@/server/schemas/common';
import { AssignmentPolicy, BusinessAssignmentInput } from '@/server/schemas/assignment';
import { assignmentSettings, setBusinessAssignment, setLocationAssignment } from '@/server/services/assignment/settings';
import { staffProcedure } from '../../init';

/** The Auto-assignment settings page (docs/api.md#auto-assignment): the business's policy, capacity and hand-back, each location's policy. */
export const assignmentProcedures = {
  assignmentSettings: staffProcedure.query(({ ctx }) => assignmentSettings(ctx.caller.businessId)),
  setBusinessAssignment: staffProcedure
    .input(BusinessAssignmentInput)
    .mutation(({ ctx, input }) => setBusinessAssignment(ctx.caller.businessId, input)),
  setLocationAssignment: staffProcedure
    .input(z.object({ locationId: id, assignment_policy: AssignmentPolicy.nullable() }))
    .mutation(({ ctx, input }) => setLocationAssignment(ctx.caller.businessId, input.locationId, input.assignment_policy)),
};
