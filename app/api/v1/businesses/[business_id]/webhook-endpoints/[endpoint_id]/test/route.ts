import { testWebhookEndpoint as op } from '@/server/http/operations/outgoing-webhooks';
import { route } from '@/server/http/route';
import { sendTestWebhook } from '@/server/services/outgoing-webhooks/endpoints';
import { WEBHOOK_MANAGER_ROLES } from '@/server/shared/outgoing-webhooks';
import { requireRole } from '@/server/web/staff-context';

// POST: a `webhook.test` event to this endpoint; answers its delivery.
export const POST = route(op, async ({ caller, params, tx }) => {
  await requireRole(caller, WEBHOOK_MANAGER_ROLES, tx);
  return sendTestWebhook(params.business_id, params.endpoint_id, tx);
});
