import { listWebhookDeliveries as op } from '@/server/http/operations/outgoing-webhooks';
import { route } from '@/server/http/route';
import { listWebhookDeliveries } from '@/server/services/outgoing-webhooks/endpoints';
import { WEBHOOK_MANAGER_ROLES } from '@/server/shared/outgoing-webhooks';
import { requireRole } from '@/server/web/staff-context';

// GET: the endpoint's delivery log, newest first.
export const GET = route(op, async ({ caller, params, query, tx }) => {
  await requireRole(caller, WEBHOOK_MANAGER_ROLES, tx);
  return listWebhookDeliveries(params.business_id, params.endpoint_id, query, tx);
});
