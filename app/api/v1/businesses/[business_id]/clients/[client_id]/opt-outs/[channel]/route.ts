import { optInClient, optOutClient } from '@/server/http/operations/opt-outs';
import { route } from '@/server/http/route';
import { setClientOptOut } from '@/server/services/compliance/client-opt-outs';

// PUT: the client's address is opted out of the channel; DELETE: opted back in (source `api`).
export const PUT = route(optOutClient, ({ params }) =>
  setClientOptOut(params.business_id, params.client_id, params.channel, true, 'api'),
);
export const DELETE = route(optInClient, ({ params }) =>
  setClientOptOut(params.business_id, params.client_id, params.channel, false, 'api'),
);
