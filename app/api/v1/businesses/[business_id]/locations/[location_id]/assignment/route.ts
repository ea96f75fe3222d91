import { setLocationAssignment as setOp } from '@/server/http/operations/assignment';
import { route } from '@/server/http/route';
import { setLocationAssignment } from '@/server/services/assignment/settings';

// PUT: a location's own auto-assignment policy (null: the business's).
export const PUT = route(setOp, ({ params, body, tx }) =>
  setLocationAssignment(params.business_id, params.location_id, body.assignment_policy, tx),
);
