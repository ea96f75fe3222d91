import { z } from 'zod';
import { id } from '@/server/schemas/common';
import {
  CreateWebhookEndpointRequest,
  UpdateWebhookEndpointRequest,
  WebhookDeliveryListQuery,
} from '@/server/schemas/outgoing-webhooks';
import * as endpoints from '@/server/services/outgoing-webhooks/endpoints';
import { WEBHOOK_MANAGER_ROLES } from '@/server/shared/outgoing-webhooks';
import { requireRole } from '@/server/web/staff-context';
import { staffProcedure } from '../../init';
import { pageNumber } from './shared';

/**
 * The webhooks settings page (docs/api.md#webhooks-you-receive-from-us): the same services as REST,
 * under the same rule: an owner or a manager only (FORBIDDEN, in the service's words, for `staff`),
 * checked on every call, so a role changed while the page is open counts at once.
 */
const managerProcedure = staffProcedure.use(async ({ ctx, next }) => {
  await requireRole(ctx.caller, WEBHOOK_MANAGER_ROLES);
  return next();
});

const endpointId = z.object({ endpointId: id });

export const webhookProcedures = {
  webhookEndpoints: managerProcedure.query(({ ctx }) => endpoints.listWebhookEndpoints(ctx.caller.businessId)),
  /** Answers the secret, which the page shows this once. */
  createWebhookEndpoint: managerProcedure
    .input(CreateWebhookEndpointRequest)
    .mutation(({ ctx, input }) => endpoints.createWebhookEndpoint(ctx.caller.businessId, input)),
  updateWebhookEndpoint: managerProcedure
    .input(UpdateWebhookEndpointRequest.extend(endpointId.shape))
    .mutation(({ ctx, input: { endpointId, ...patch } }) =>
      endpoints.updateWebhookEndpoint(ctx.caller.businessId, endpointId, patch),
    ),
  deleteWebhookEndpoint: managerProcedure
    .input(endpointId)
    .mutation(({ ctx, input }) => endpoints.deleteWebhookEndpoint(ctx.caller.businessId, input.endpointId)),
  rotateWebhookSecret: managerProcedure
    .input(endpointId)
    .mutation(({ ctx, input }) => endpoints.rotateWebhookSecret(ctx.caller.businessId, input.endpointId)),
  testWebhookEndpoint: managerProcedure
    .input(endpointId)
    .mutation(({ ctx, input }) => endpoints.sendTestWebhook(ctx.caller.businessId, input.endpointId)),
  /** Newest first; pages as JSON numbers (REST's are query strings). */
  webhookDeliveries: managerProcedure
    .input(
      endpointId.extend({
        outcome: WebhookDeliveryListQuery.shape.outcome,
        page: pageNumber.default(1),
        page_size: z.number().int().min(1).max(100).default(25),
      }),
    )
    .query(({ ctx, input: { endpointId, ...query } }) =>
      endpoints.listWebhookDeliveries(ctx.caller.businessId, endpointId, query),
    ),
  redeliverWebhook: managerProcedure
    .input(endpointId.extend({ deliveryId: id }))
    .mutation(({ ctx, input }) => endpoints.redeliverWebhook(ctx.caller.businessId, input.endpointId, input.deliveryId)),
};
