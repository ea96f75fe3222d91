import { businessPath } from '@/server/schemas/common';
import {
  CreateWebhookEndpointRequest,
  PaginatedWebhookDeliveries,
  UpdateWebhookEndpointRequest,
  WebhookDelivery,
  WebhookDeliveryListQuery,
  WebhookDeliveryPath,
  WebhookEndpoint,
  WebhookEndpointDeleted,
  WebhookEndpointList,
  WebhookEndpointPath,
  WebhookEndpointWithSecret,
} from '@/server/schemas/outgoing-webhooks';
import { defineOperation } from '../operation';

const common = { tag: 'webhook-endpoints', auth: 'any' as const, errors: [403, 404] };
const WHO =
  'An API key, or a staff session of an `owner` or `manager` (403 for other staff). docs/api.md#webhooks-you-receive-from-us.';
const endpoints = '/businesses/{business_id}/webhook-endpoints';
const endpoint = `${endpoints}/{endpoint_id}`;

export const listWebhookEndpoints = defineOperation({
  operationId: 'listWebhookEndpoints',
  method: 'get',
  path: endpoints,
  summary: 'List webhook endpoints',
  description: `Oldest first; without their secrets. ${WHO}`,
  params: businessPath,
  response: WebhookEndpointList,
  ...common,
});

export const createWebhookEndpoint = defineOperation({
  operationId: 'createWebhookEndpoint',
  method: 'post',
  path: endpoints,
  summary: 'Register a webhook endpoint',
  description: `Events that happen from now on are POSTed to it, signed with the \`secret\` returned here (and only here, and at rotation). The URL must be https and its host public (422 on \`url\`), unless the server allows private addresses. At most 20 per business (409). ${WHO}`,
  params: businessPath,
  body: CreateWebhookEndpointRequest,
  response: WebhookEndpointWithSecret,
  successStatus: 201,
  ...common,
  errors: [403, 404, 409],
});

export const getWebhookEndpoint = defineOperation({
  operationId: 'getWebhookEndpoint',
  method: 'get',
  path: endpoint,
  summary: 'Get a webhook endpoint',
  description: `With its health: \`enabled\`, \`disabled_reason\`, \`failing_since\`. ${WHO}`,
  params: WebhookEndpointPath,
  response: WebhookEndpoint,
  ...common,
});

export const updateWebhookEndpoint = defineOperation({
  operationId: 'updateWebhookEndpoint',
  method: 'patch',
  path: endpoint,
  summary: 'Update a webhook endpoint',
  description: `Only the fields given change. \`enabled: true\` re-enables a disabled endpoint; its failed deliveries can then be redelivered. ${WHO}`,
  params: WebhookEndpointPath,
  body: UpdateWebhookEndpointRequest,
  response: WebhookEndpoint,
  ...common,
});

export const deleteWebhookEndpoint = defineOperation({
  operationId: 'deleteWebhookEndpoint',
  method: 'delete',
  path: endpoint,
  summary: 'Delete a webhook endpoint',
  description: `Its pending deliveries are dropped with it. ${WHO}`,
  params: WebhookEndpointPath,
  response: WebhookEndpointDeleted,
  ...common,
});

export const rotateWebhookSecret = defineOperation({
  operationId: 'rotateWebhookSecret',
  method: 'post',
  path: `${endpoint}/rotate-secret`,
  summary: 'Rotate a webhook endpoint’s secret',
  description: `Returns the new secret. For 24 hours every delivery is signed with both the new and the previous one (two signatures in \`webhook-signature\`), so the receiver can switch without refusing a delivery. ${WHO}`,
  params: WebhookEndpointPath,
  response: WebhookEndpointWithSecret,
  ...common,
});

export const testWebhookEndpoint = defineOperation({
  operationId: 'testWebhookEndpoint',
  method: 'post',
  path: `${endpoint}/test`,
  summary: 'Send a test event',
  description: `A \`webhook.test\` event, signed, retried and logged like any other; returns its delivery. 409 if the endpoint is disabled. ${WHO}`,
  params: WebhookEndpointPath,
  response: WebhookDelivery,
  ...common,
  errors: [403, 404, 409],
});

export const listWebhookDeliveries = defineOperation({
  operationId: 'listWebhookDeliveries',
  method: 'get',
  path: `${endpoint}/deliveries`,
  summary: 'List an endpoint’s deliveries',
  description: `Newest first: each event sent to it, with its last attempt (status code, duration, error, the start of the answer) and its next one. ${WHO}`,
  params: WebhookEndpointPath,
  query: WebhookDeliveryListQuery,
  response: PaginatedWebhookDeliveries,
  ...common,
});

export const redeliverWebhook = defineOperation({
  operationId: 'redeliverWebhook',
  method: 'post',
  path: `${endpoint}/deliveries/{delivery_id}/redeliver`,
  summary: 'Redeliver an event',
  description: `Sends the same body with the same \`webhook-id\` again, now, with a fresh schedule of retries. 409 if the endpoint is disabled. ${WHO}`,
  params: WebhookDeliveryPath,
  response: WebhookDelivery,
  ...common,
  errors: [403, 404, 409],
});
