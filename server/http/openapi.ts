import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { APP_VERSION } from '@/server/services/health';
import { ErrorResponse, HTTPValidationError } from '@/server/schemas/common';
import { EmailContent } from '@/server/schemas/messages';
import type { Operation } from './operation';
import { operations } from './operations';
import { registerWebhooks } from './openapi-webhooks';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Body is not valid JSON or not the declared content type',
  401: 'No or unknown credentials, or an expired session',
  403: 'Credentials valid but not for this business, or a bad webhook signature',
  404: 'Unknown business or id in the path',
  409: 'Conflict (idempotency key reused with another body, or a conflicting state change)',
  413: 'Body over its limit (10 MiB, or less where the operation says so)',
  410: 'The signed URL has expired',
  415: 'A media type this service does not take or serve',
  429: 'Rate limit exceeded (see Retry-After)',
  431: 'Request line or headers over 16 KiB: refused by the HTTP server, unread',
  502: 'The provider holding the media did not deliver it (unreachable, an error, or over the size limit)',
  503: 'A dependency is unavailable',
  507: "The business's uploads are at their storage quota (MEDIA_STORAGE_QUOTA_BYTES)",
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
    [op.successStatus ?? 200]: {
      description: op.successStatus === 201 ? 'Created' : 'Success',
      content: op.binaryResponse
        ? Object.fromEntries(op.binaryResponse.map((type) => [type, { schema: BINARY }]))
        : op.response
          ? {
              [op.responseType ?? 'application/json']: {
                schema: op.nullableResponse ? (op.response as z.ZodType).nullable() : op.response,
              },
            }
          : undefined,
    },
  };
  if (op.upsert) responses[201] = { ...responses[200]!, description: 'Created' };
  // Every status the wrapper (server/http/route.ts) can answer for this operation, by rule, so the
  // fuzzer's "documented status" check holds for all of them.
  const statuses = new Set<number>(op.errors ?? []);
  if (op.params || op.query || op.body) statuses.add(422);
  if (op.params) statuses.add(404); // an id past 2147483647, or unknown
  const authenticated = op.auth !== 'none' && op.auth !== 'webhook';
  if (authenticated) [401, 403, 429, 503].forEach((s) => statuses.add(s));
  if (op.auth === 'webhook') [403, 503].forEach((s) => statuses.add(s));
  const body = op.body ?? op.docBody;
  if (body || op.fileBody) statuses.add(413);
  if ((body && (op.bodyType ?? 'application/json') === 'application/json') || op.fileBody) statuses.add(400);
  if (op.idempotent) statuses.add(409);
  statuses.add(431);
  for (const status of [...statuses].sort()) {
    responses[status] =
      status === 422
        ? { description: 'Validation error', content: { 'application/json': { schema: HTTPValidationError } } }
        : status === 431
          ? { description: ERROR_DESCRIPTIONS[431]! }
          : {
              description: ERROR_DESCRIPTIONS[status] ?? 'Error',
              content: { 'application/json': { schema: (status === 409 && op.conflictResponse) || ErrorResponse } },
            };
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
      body: op.fileBody
        ? { required: true, content: fileContent(op.fileBody) }
        : body
          ? { required: true, content: { [op.bodyType ?? 'application/json']: { schema: body } } }
          : undefined,
    },
    responses,
  });
}

const BINARY = { type: 'string', format: 'binary' } as const;

/** A file body: a multipart form with the file in one part, or the file's bytes with its own type. */
function fileContent(file: NonNullable<Operation['fileBody']>) {
  // maxLength: the file's bytes (JSON Schema counts a binary string's length in them).
  const bytes = { ...BINARY, maxLength: file.maxBytes };
  return {
    'multipart/form-data': {
      schema: { type: 'object', required: [file.field], properties: { [file.field]: bytes } },
    },
    ...Object.fromEntries(file.types.map((type) => [type, { schema: bytes }])),
  } as NonNullable<NonNullable<RouteConfig['request']>['body']>['content'];
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
  registerWebhooks(registry);
  // Named by the contract (docs/api.md#schemas) though no operation's body is exactly it.
  const { $schema: _, ...emailContent } = z.toJSONSchema(EmailContent) as Record<string, unknown>;
  registry.registerComponent('schemas', 'EmailContent', emailContent);
  cached = fixNullableRefs(
    new OpenApiGeneratorV31(registry.definitions).generateDocument({
      openapi: '3.1.0',
      info: {
        title: 'Conversational Messaging Service',
        version: APP_VERSION,
        description:
          'SMS, email and voice conversations between service businesses and their clients. Authenticate with `X-API-KEY` (platform or business key) or a staff session.',
      },
      servers: [{ url: '/api/v1' }],
    }),
  );
  return cached;
}

/**
 * zod-to-openapi renders a nullable reference (`UserType.nullable()`) as
 * `allOf: [{$ref}, {type: ['string', 'null']}]`, which no null satisfies (the referenced enum
 * refuses it). The JSON Schema 2020-12 way is `anyOf: [{$ref}, {type: 'null'}]`.
 */
function fixNullableRefs<T>(node: T): T {
  if (Array.isArray(node)) return node.map(fixNullableRefs) as T;
  if (!node || typeof node !== 'object') return node;
  const obj = node as Record<string, unknown>;
  const allOf = obj.allOf as Record<string, unknown>[] | undefined;
  if (
    allOf?.length === 2 &&
    typeof allOf[0]!.$ref === 'string' &&
    Array.isArray(allOf[1]!.type) &&
    (allOf[1]!.type as string[]).includes('null')
  ) {
    const { allOf: _, ...rest } = obj;
    return { ...rest, anyOf: [allOf[0], { type: 'null' }] } as T;
  }
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, fixNullableRefs(v)])) as T;
}
