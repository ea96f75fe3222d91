import { redeliverWebhook as op } from '@/server/http/operations/outgoing-webhooks';
import { route } from '@/server/http/route';
import { redeliverWebhook } from '@/server/services/outgoing-webhooks/endpoints';
import { WEBHOOK_MANAGER_ROLES } from '@/server/shared/outgoing-webhooks';
import { requireRole } from '@/server/web/staff-context';

// POST: the same event again, now, with a fresh schedule of retries.
export const POST = route(op, async ({ caller, params, tx }) => {
  await requireRole(caller, WEBHOOK_MANAGER_ROLES, tx);
  return redeliverWebhook(params.business_id, params.endpoint_id, params.delivery_id, tx);
});
