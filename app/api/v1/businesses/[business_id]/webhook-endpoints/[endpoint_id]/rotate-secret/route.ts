import { rotateWebhookSecret as op } from '@/server/http/operations/outgoing-webhooks';
import { route } from '@/server/http/route';
import { rotateWebhookSecret } from '@/server/services/outgoing-webhooks/endpoints';
import { WEBHOOK_MANAGER_ROLES } from '@/server/shared/outgoing-webhooks';
import { requireRole } from '@/server/web/staff-context';

// POST: a new signing secret; the previous one keeps signing beside it for 24 hours.
export const POST = route(op, async ({ caller, params, tx }) => {
  await requireRole(caller, WEBHOOK_MANAGER_ROLES, tx);
  return rotateWebhookSecret(params.business_id, params.endpoint_id, tx);
});
