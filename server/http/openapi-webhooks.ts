import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { EVENT_TYPES } from '@/db/schema';
import { EVENT_DATA, EventActor } from '@/server/services/events/types';

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type an endpoint can receive
 * (docs/api.md#webhooks-you-receive-from-us), its body and the Standard Webhooks headers, from the
 * same zod schemas the log checks events with, so the document cannot drift from what is sent.
 */
const HEADERS = z.object({
  'webhook-id': z.string().meta({ description: 'The event id: the same on every attempt and redelivery (deduplicate by it)' }),
  'webhook-timestamp': z.string().meta({ description: 'Seconds since the epoch, when this attempt was signed' }),
  'webhook-signature': z.string().meta({
    description:
      '`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` under the secret; space-separated, one per secret, during a rotation',
  }),
});

/** What every event's `data` carries besides its own fields. */
const common = {
  business_id: z.number().int(),
  actor: EventActor,
  sequence: z
    .number()
    .int()
    .optional()
    .meta({ description: "The event's place among its conversation's events (events of a conversation only)" }),
};

export function registerWebhooks(registry: OpenAPIRegistry): void {
  const bodies: [string, z.ZodType][] = [
    ...EVENT_TYPES.map((type): [string, z.ZodType] => [type, EVENT_DATA[type].extend(common)]),
    ['webhook.test', z.object({ business_id: z.number().int(), endpoint_id: z.number().int() })],
  ];
  for (const [type, data] of bodies) {
    registry.registerWebhook({
      method: 'post',
      path: type,
      operationId: `webhook:${type}`,
      summary: type,
      request: {
        headers: HEADERS,
        body: {
          required: true,
          content: {
            'application/json': {
              schema: z.object({ type: z.literal(type), timestamp: z.string().meta({ format: 'date-time' }), data }),
            },
          },
        },
      },
      responses: {
        200: { description: 'Any 2xx: delivered. 410: the endpoint is disabled. Anything else, or no answer in 15 s: retried.' },
      },
    });
  }
}
