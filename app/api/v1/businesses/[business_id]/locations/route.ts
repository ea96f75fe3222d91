import { listLocations as op } from '@/server/http/operations/businesses';
import { route } from '@/server/http/route';
import { listLocations } from '@/server/services/locations';

// GET: the business's locations (a bare array).
export const GET = route(op, ({ params, tx }) => listLocations(params.business_id, tx));
