import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { APP_VERSION } from '@/server/services/health';
import { ErrorResponse, HTTPValidationError } from '@/server/schemas/common';
import { EmailContent } from '@/server/schemas/messages';
import type { Operation } from './operation';
import { operations } from './operations';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Body is not valid JSON or not the declared content type',
  401: 'No or unknown credentials, or an expired session',
  403: 'Credentials valid but not for this business, or a bad webhook signature',
  404: 'Unknown business or id in the path',
  409: 'Conflict (idempotency key reused with another body, or a conflicting state change)',
  413: 'Body over 10 MiB',
  429: 'Rate limit exceeded (see Retry-After)',
  503: 'A dependency is unavailable',
};

function securityFor(op: Operation): RouteConfig['security'] {
  switch (op.auth) {
    case 'none':
    case 'webhook':
      return [];
    case 'any':
      return [{ ApiKey: [] }, { SessionCookie: [] }, { BearerSession: [] }];
    default:
      return [{ ApiKey: [] }];
  }
}

const IDEMPOTENCY_HEADER = z.object({
  'Idempotency-Key': z
    .string()
    .max(255)
    .optional()
    .meta({ description: 'Same key and body within 24 h replays the first response; another body is 409.' }),
});

function register(registry: OpenAPIRegistry, op: Operation) {
  const responses: RouteConfig['responses'] = {
    200: {
      description: 'Success',
      content: op.response
        ? { [op.responseType ?? 'application/json']: { schema: op.nullableResponse ? (op.response as z.ZodType).nullable() : op.response } }
        : undefined,
    },
  };
  const statuses = new Set<number>(op.errors ?? []);
  if (op.params || op.query || op.body) statuses.add(422);
  if (op.auth !== 'none' && op.auth !== 'webhook') [401, 429].forEach((s) => statuses.add(s));
  const body = op.body ?? op.docBody;
  if (body && (op.bodyType ?? 'application/json') === 'application/json') [400, 413].forEach((s) => statuses.add(s));
  if (op.idempotent) statuses.add(409);
  for (const status of [...statuses].sort()) {
    responses[status] =
      status === 422
        ? { description: 'Validation error', content: { 'application/json': { schema: HTTPValidationError } } }
        : { description: ERROR_DESCRIPTIONS[status] ?? 'Error', content: { 'application/json': { schema: ErrorResponse } } };
  }
  registry.registerPath({
    method: op.method,
    path: op.path,
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    description: op.description,
    security: securityFor(op),
    request: {
      params: op.params as never,
      query: op.query as never,
      headers: op.idempotent ? IDEMPOTENCY_HEADER : undefined,
      body: body ? { required: true, content: { [op.bodyType ?? 'application/json']: { schema: body } } } : undefined,
    },
    responses,
  });
}

let cached: object | undefined;

/** The OpenAPI 3.1 document, generated from the same zod schemas that validate requests. */
export function openApiDocument(): object {
  if (cached) return cached;
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'ApiKey', { type: 'apiKey', in: 'header', name: 'X-API-KEY' });
  registry.registerComponent('securitySchemes', 'SessionCookie', { type: 'apiKey', in: 'cookie', name: 'session' });
  registry.registerComponent('securitySchemes', 'BearerSession', { type: 'http', scheme: 'bearer' });
  for (const op of operations) register(registry, op);
  // Named by the contract (SPEC §5) though no operation's body is exactly it.
  const { $schema: _, ...emailContent } = z.toJSONSchema(EmailContent) as Record<string, unknown>;
  registry.registerComponent('schemas', 'EmailContent', emailContent);
  cached = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Conversational Messaging Service',
      version: APP_VERSION,
      description:
        'SMS, email and voice conversations between service businesses and their clients. Authenticate with `X-API-KEY` (platform or business key) or a staff session.',
    },
    servers: [{ url: '/api/v1' }],
  });
  return cached;
}
