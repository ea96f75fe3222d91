import { createWebhookEndpoint as createOp, listWebhookEndpoints as listOp } from '@/server/http/operations/outgoing-webhooks';
import { route } from '@/server/http/route';
import { createWebhookEndpoint, listWebhookEndpoints } from '@/server/services/outgoing-webhooks/endpoints';
import { WEBHOOK_MANAGER_ROLES } from '@/server/shared/outgoing-webhooks';
import { requireRole } from '@/server/web/staff-context';

// GET: the business's webhook endpoints; POST: a new one (its secret is in this answer only).
export const GET = route(listOp, async ({ caller, params, tx }) => {
  await requireRole(caller, WEBHOOK_MANAGER_ROLES, tx);
  return listWebhookEndpoints(params.business_id, tx);
});
export const POST = route(createOp, async ({ caller, params, body, tx }) => {
  await requireRole(caller, WEBHOOK_MANAGER_ROLES, tx);
  return createWebhookEndpoint(params.business_id, body, tx);
});
