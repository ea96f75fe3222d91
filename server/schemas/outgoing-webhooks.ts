import { z } from 'zod';
import { EVENT_TYPES } from '@/db/schema/enums';
import { MAX_WEBHOOK_DESCRIPTION, MAX_WEBHOOK_URL, WEBHOOK_DELIVERY_STATUSES } from '@/server/shared/outgoing-webhooks';
import { idParam, paginationQuery, timestampOut } from './common';

/** docs/api.md#webhooks-you-receive-from-us. The URL's own rules (https, public host) are checked by the service. */

export const WebhookEndpointPath = z.object({ business_id: idParam, endpoint_id: idParam });
export const WebhookDeliveryPath = z.object({ business_id: idParam, endpoint_id: idParam, delivery_id: idParam });

const url = z.string().trim().min(1, 'must not be empty').max(MAX_WEBHOOK_URL).meta({
  description: 'Where events are POSTed: an absolute https URL of a public host (docs/api.md#webhooks-you-receive-from-us)',
});
const EventTypes = z
  .array(z.enum(EVENT_TYPES))
  .min(1, 'must name at least one event type, or be null for all')
  .max(EVENT_TYPES.length)
  .nullable()
  .meta({ description: 'The event types sent to this endpoint; null (or omitted at creation) for every type' });
const description = z.string().trim().max(MAX_WEBHOOK_DESCRIPTION).nullable();

export const CreateWebhookEndpointRequest = z
  .object({ url, event_types: EventTypes.optional(), description: description.optional() })
  .meta({ id: 'CreateWebhookEndpointRequest' });

export const UpdateWebhookEndpointRequest = z
  .object({
    url: url.optional(),
    event_types: EventTypes.optional(),
    description: description.optional(),
    enabled: z
      .boolean()
      .optional()
      .meta({ description: 'false pauses deliveries; true re-enables a disabled endpoint (its failing run starts over)' }),
  })
  .meta({ id: 'UpdateWebhookEndpointRequest', description: 'Only the fields given change.' });

export const WebhookEndpoint = z
  .object({
    id: z.number().int(),
    business_id: z.number().int(),
    url: z.string(),
    event_types: z.array(z.enum(EVENT_TYPES)).nullable(),
    description: z.string().nullable(),
    enabled: z.boolean(),
    disabled_reason: z.string().nullable().meta({ description: 'Why it was disabled, when it was not by a PATCH' }),
    disabled_at: timestampOut.nullable(),
    failing_since: timestampOut.nullable().meta({ description: 'The first failure of its current run of failures' }),
    created_at: timestampOut,
    updated_at: timestampOut,
  })
  .meta({ id: 'WebhookEndpoint' });

export const WebhookEndpointWithSecret = WebhookEndpoint.extend({
  secret: z.string().meta({ description: 'The signing secret (`whsec_…`): shown only at creation and rotation' }),
}).meta({ id: 'WebhookEndpointWithSecret' });

export const WebhookEndpointList = z.object({ webhook_endpoints: z.array(WebhookEndpoint) }).meta({ id: 'WebhookEndpointList' });

export const WebhookEndpointDeleted = z
  .object({ success: z.boolean(), endpoint_id: z.number().int() })
  .meta({ id: 'WebhookEndpointDeleted' });

export const WebhookDeliveryListQuery = z.object({
  outcome: z
    .enum(WEBHOOK_DELIVERY_STATUSES)
    .optional()
    .meta({ description: '`pending` (waiting for an attempt), `delivered` or `failed`' }),
  ...paginationQuery,
});

export const WebhookDelivery = z
  .object({
    id: z.number().int(),
    endpoint_id: z.number().int(),
    event_id: z.number().int().meta({ description: 'The `webhook-id` header: the same on every attempt' }),
    event_type: z.string(),
    status: z.enum(WEBHOOK_DELIVERY_STATUSES),
    attempts: z.number().int(),
    next_attempt_at: timestampOut.nullable().meta({ description: 'When the next attempt is due (pending only)' }),
    last_attempt_at: timestampOut.nullable(),
    last_status_code: z.number().int().nullable(),
    last_duration_ms: z.number().int().nullable(),
    last_error: z.string().nullable(),
    last_response_body: z.string().nullable().meta({ description: 'The first 2 KiB of the last answer' }),
    request_body: z.string().meta({ description: 'The JSON body sent, byte for byte' }),
    delivered_at: timestampOut.nullable(),
    created_at: timestampOut,
  })
  .meta({ id: 'WebhookDelivery' });

export const PaginatedWebhookDeliveries = z
  .object({
    deliveries: z.array(WebhookDelivery),
    page: z.number().int(),
    page_size: z.number().int(),
    next_page: z.boolean(),
  })
  .meta({ id: 'PaginatedWebhookDeliveries' });
