import { optInClient, optOutClient } from '@/server/http/operations/opt-outs';
import { route } from '@/server/http/route';
import { actingStaff, writingStaff } from '@/server/web/staff-context';
import { setClientOptOut } from '@/server/services/compliance/client-opt-outs';

// PUT: the client's address is opted out of the channel; DELETE: opted back in (source `api`, or
// how the client asked: docs/api.md#opt-out). Either is recorded with the session's staff member.
export const PUT = route(optOutClient, ({ caller, params, tx }) =>
  setClientOptOut(
    params.business_id,
    params.client_id,
    params.channel,
    true,
    { via: 'api', staffId: actingStaff(caller) },
    undefined,
    tx,
  ),
);
export const DELETE = route(optInClient, ({ caller, params, body, tx }) =>
  setClientOptOut(
    params.business_id,
    params.client_id,
    params.channel,
    false,
    { via: 'api', staffId: writingStaff(caller, body.staff_id) },
    { source: body.source, note: body.note },
    tx,
  ),
);
