import { listClientConsents, recordClientConsent } from '@/server/http/operations/consents';
import { route } from '@/server/http/route';
import { actingStaff } from '@/server/web/staff-context';
import { clientConsents, recordConsent } from '@/server/services/compliance/consent';

// GET: the client's current consent per channel and purpose, and its history.
export const GET = route(listClientConsents, ({ params, tx }) => clientConsents(params.business_id, params.client_id, tx));

// POST: append a consent record (given or withdrawn); a staff session is recorded as its author.
export const POST = route(recordClientConsent, ({ caller, params, body, tx }) =>
  recordConsent(params.business_id, params.client_id, body, actingStaff(caller), tx),
);
