import { listStaff as op } from '@/server/http/operations/conversations';
import { route } from '@/server/http/route';
import { listStaff } from '@/server/services/directory';

// GET: the business's staff, searchable, filterable by external_id.
export const GET = route(op, ({ params, query, tx }) => listStaff(params.business_id, query, tx));
