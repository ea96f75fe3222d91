import { z } from 'zod';
import { ASSIGNMENT_POLICIES } from '@/db/schema/enums';

/** Auto-assignment's settings (docs/api.md#auto-assignment). */

export const MAX_ASSIGNMENT_CAPACITY = 1000;

export const AssignmentPolicy = z.enum(ASSIGNMENT_POLICIES).meta({
  id: 'AssignmentPolicy',
  description:
    '`off`: nothing is assigned automatically; `round_robin`: to whoever was given one longest ago; `balanced`: to whoever has the fewest conversations waiting for their reply',
});

export const AssignmentCapacity = z
  .number()
  .int()
  .min(0)
  .max(MAX_ASSIGNMENT_CAPACITY)
  .meta({ description: 'Conversations waiting for a staff member’s reply beyond which they are given no more (default 10)' });

export const BusinessAssignmentInput = z
  .strictObject({
    assignment_policy: AssignmentPolicy.optional(),
    assignment_capacity: AssignmentCapacity.optional(),
    hand_back_on_away: z.boolean().optional().meta({
      description: 'Going Away (or a conversation reopening while its assignee is away) hands their waiting conversations back',
    }),
  })
  .meta({ id: 'BusinessAssignmentInput', description: 'Omitted fields keep their value' });

export const LocationAssignmentInput = z
  .strictObject({
    assignment_policy: AssignmentPolicy.nullable().meta({ description: "The location's own policy; null: the business's" }),
  })
  .meta({ id: 'LocationAssignmentInput' });

export const AssignmentSettings = z
  .object({
    assignment_policy: AssignmentPolicy,
    assignment_capacity: AssignmentCapacity,
    hand_back_on_away: z.boolean(),
    locations: z.array(
      z.object({
        location_id: z.number().int(),
        name: z.string(),
        assignment_policy: AssignmentPolicy.nullable().meta({ description: "The location's own policy; null: the business's" }),
        effective_policy: AssignmentPolicy.meta({ description: 'The policy its conversations are assigned by' }),
      }),
    ),
  })
  .meta({ id: 'AssignmentSettings' });
