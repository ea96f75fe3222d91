import { id } from './common';

/**
 * A write's `staff_id` naming who acts (docs/api.md#staff-sessions), enforced by
 * server/web/staff-context.ts: documented once, for every body that carries one.
 */
export const actingStaffId = id.optional().meta({
  description:
    'Who acts. A staff session acts as its own staff member: naming anyone else is a 422 on this field. An API key may name a staff member of the business (an active one, except in record mode, which files history)',
});
