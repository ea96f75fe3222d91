import { clientDetails as op } from '@/server/http/operations/conversations';
import { route } from '@/server/http/route';
import { clientDetails } from '@/server/services/conversations';

// GET: the client's profile and conversation; null for a client this business does not have.
export const GET = route(op, ({ params, tx }) => clientDetails(params.business_id, params.client_id, tx));
