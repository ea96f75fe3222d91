import { getAssignmentSettings, setBusinessAssignment as setOp } from '@/server/http/operations/assignment';
import { route } from '@/server/http/route';
import { assignmentSettings, setBusinessAssignment } from '@/server/services/assignment/settings';

// GET: auto-assignment settings; PUT: the business's policy, capacity and hand-back.
export const GET = route(getAssignmentSettings, ({ params, tx }) => assignmentSettings(params.business_id, tx));
export const PUT = route(setOp, ({ params, body, tx }) => setBusinessAssignment(params.business_id, body, tx));
