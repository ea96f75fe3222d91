import { staffProfile as op } from '@/server/http/operations/conversations';
import { route } from '@/server/http/route';
import { staffProfile } from '@/server/services/directory';

// GET: one staff member with their open conversations.
export const GET = route(op, ({ params, tx }) => staffProfile(params.business_id, params.staff_id, tx));
