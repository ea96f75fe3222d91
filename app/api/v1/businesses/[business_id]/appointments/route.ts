import { listAppointments as op } from '@/server/http/operations/appointments';
import { route } from '@/server/http/route';
import { listAppointments } from '@/server/services/appointments';

// GET: the business's appointments by start time, filtered and paginated.
export const GET = route(op, ({ params, query, tx }) => listAppointments(params.business_id, query, tx));
