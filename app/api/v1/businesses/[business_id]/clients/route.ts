import { listClients as op } from '@/server/http/operations/conversations';
import { route } from '@/server/http/route';
import { listClients } from '@/server/services/directory';

// GET: the business's clients, searchable, filterable by the platform's external_id.
export const GET = route(op, ({ params, query, tx }) => listClients(params.business_id, query, tx));
