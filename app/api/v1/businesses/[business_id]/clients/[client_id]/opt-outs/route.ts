import { getClientOptOuts } from '@/server/http/operations/opt-outs';
import { route } from '@/server/http/route';
import { clientOptOutHistory } from '@/server/services/compliance/client-opt-outs';

// GET: whether the client's number and address are opted out, and their opt-out history.
export const GET = route(getClientOptOuts, ({ params, tx }) => clientOptOutHistory(params.business_id, params.client_id, tx));
