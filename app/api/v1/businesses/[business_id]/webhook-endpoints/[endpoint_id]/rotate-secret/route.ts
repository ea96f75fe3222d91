import { rotateWebhookSecret as op } from '@/server/http/operations/outgoing-webhooks';
import { route } from '@/server/http/route';
import { rotateWebhookSecret } from '@/server/services/outgoing-webhooks/endpoints';
import { requireRole } from '@/server/web/staff-context';

// POST: a new signing secret; the previous one keeps signing beside it for 24 hours.
export const POST = route(op, async ({ caller, params, tx }) => {
  await requireRole(caller, ['owner', 'manager'], tx);
  return rotateWebhookSecret(params.business_id, params.endpoint_id, tx);
});
