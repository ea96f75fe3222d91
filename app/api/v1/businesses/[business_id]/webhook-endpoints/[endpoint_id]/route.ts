import {
  deleteWebhookEndpoint as deleteOp,
  getWebhookEndpoint as getOp,
  updateWebhookEndpoint as updateOp,
} from '@/server/http/operations/outgoing-webhooks';
import { route } from '@/server/http/route';
import { deleteWebhookEndpoint, getWebhookEndpoint, updateWebhookEndpoint } from '@/server/services/outgoing-webhooks/endpoints';
import { WEBHOOK_MANAGER_ROLES } from '@/server/shared/outgoing-webhooks';
import { requireRole } from '@/server/web/staff-context';

// GET, PATCH, DELETE: one webhook endpoint of the business (404 for another business's).
export const GET = route(getOp, async ({ caller, params, tx }) => {
  await requireRole(caller, WEBHOOK_MANAGER_ROLES, tx);
  return getWebhookEndpoint(params.business_id, params.endpoint_id, tx);
});
export const PATCH = route(updateOp, async ({ caller, params, body, tx }) => {
  await requireRole(caller, WEBHOOK_MANAGER_ROLES, tx);
  return updateWebhookEndpoint(params.business_id, params.endpoint_id, body, tx);
});
export const DELETE = route(deleteOp, async ({ caller, params, tx }) => {
  await requireRole(caller, WEBHOOK_MANAGER_ROLES, tx);
  return deleteWebhookEndpoint(params.business_id, params.endpoint_id, tx);
});
