import { getAvailability as op } from '@/server/http/operations/staff-availability';
import { route } from '@/server/http/route';
import { getAvailability } from '@/server/services/staff-schedules';

// GET: who is available — each active staff member's Away switch, shift, capacity and waiting count.
export const GET = route(op, ({ params, query, tx }) => getAvailability(params.business_id, query.at, tx));
