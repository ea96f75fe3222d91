import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { api, jsonOf, match } from '@/server/testing/http';
import { operations } from './operations';

/** The named schemas of docs/api.md#schemas: each must be a component of the document. */
const SEED_SCHEMA_NAMES = [
  'AssignmentFilterType',
  'AuthParameters',
  'AuthTokenResponse',
  'BusinessOnboardRequest',
  'Channel',
  'ClientConversationStatus',
  'ClientListResponse',
  'ClientType',
  'DialerToken',
  'EmailContent',
  'ExternalEmailProvider',
  'HTTPValidationError',
  'Health',
  'HealthService',
  'LocationResponse',
  'MessageFilterType',
  'MessageResponse',
  'MessageStatusUpdateFilters',
  'NoteRequest',
  'PaginatedBusinessClientDetails',
  'PaginatedClientList',
  'RecordEmailItem',
  'RecordEmailRequest',
  'RecordMessageItem',
  'RecordSmsRequest',
  'SendEmailRequest',
  'SendSmsRequest',
  'SessionExpiryRequest',
  'SuccessResponse',
  'UpdateEmailStatusRequest',
  'UpdateSmsStatusRequest',
  'UpdateSuccessResponse',
  'ValidationError',
  'ProcessMessagesRequest',
];

describe('GET /api/v1/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document with both security schemes and the schema names of docs/api.md#schemas', async () => {
    const res = await api.get('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    const doc = await jsonOf(res);
    expect(doc.openapi).toBe('3.1.0');
    // Throws on any structural error or dangling $ref.
    await SwaggerParser.validate(structuredClone(doc));
    expect(Object.keys(doc.components.securitySchemes)).toEqual(expect.arrayContaining(['ApiKey', 'SessionCookie']));
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-KEY' });
    expect(doc.components.securitySchemes.SessionCookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'session' });
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(SEED_SCHEMA_NAMES));
    expect(doc.components.schemas.EmailContent).toMatchObject({ type: 'object', required: ['subject', 'text'] });
    const token = doc.paths['/auth/token'].post;
    expect(token.tags).toEqual(['authentication']);
    expect(token.responses['422'].content['application/json'].schema.$ref).toBe('#/components/schemas/HTTPValidationError');
  });

  it('documents exactly the operations that are served, one per path and method', async () => {
    const doc = await jsonOf(await api.get('/api/v1/openapi.json'));
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`),
    );
    expect(documented.sort()).toEqual(operations.map((o) => `${o.method.toUpperCase()} ${o.path}`).sort());
    // Each documented operation has a route module under app/ exporting that method.
    for (const op of operations) {
      const found = match(`/api/v1${op.path.replace(/\{[^}]+\}/g, '1')}`);
      expect(found, `${op.method} ${op.path}`).not.toBeNull();
      const mod = (await import(found!.file)) as Record<string, unknown>;
      expect(typeof mod[op.method.toUpperCase()], `${op.method} ${op.path}`).toBe('function');
    }
  });

  it('renders the reference at /api/v1/docs from local assets', async () => {
    const page = await api.get('/api/v1/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('/api/v1/docs/swagger-ui-bundle.js');
    const bundle = await api.get('/api/v1/docs/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
    expect((await api.get('/api/v1/docs/..%2Fpackage.json')).status).toBe(404);
  });
});

/**
 * Every value a caller sends is bounded in the contract (issue: hostile input), so the document
 * states each bound and the fuzzer tries it: strings have a maxLength (or are an enum), integers a
 * minimum and maximum, arrays a maxItems, objects of free-form keys a maxProperties.
 */
describe('request bounds in the OpenAPI document', () => {
  it('bounds every string, integer, array and map in every request parameter and body', async () => {
    const doc = await jsonOf(await api.get('/api/v1/openapi.json'));
    const schemas = doc.components.schemas as Record<string, Json>;
    const unbounded: string[] = [];
    const visit = (schema: Json | undefined, where: string, seen: Set<string>) => {
      if (!schema || typeof schema !== 'object') return;
      if (typeof schema.$ref === 'string') {
        const name = schema.$ref.split('/').pop()!;
        if (seen.has(name)) return;
        return visit(schemas[name], `${where}→${name}`, new Set([...seen, name]));
      }
      for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
        (schema[key] as Json[] | undefined)?.forEach((s, i) => visit(s, `${where}|${i}`, seen));
      const types = ([] as unknown[]).concat(schema.type ?? []);
      if (types.includes('string') && schema.enum === undefined && schema.const === undefined && schema.maxLength === undefined)
        unbounded.push(`${where}: string without maxLength`);
      if (types.includes('integer') && (schema.minimum === undefined || schema.maximum === undefined))
        unbounded.push(`${where}: integer without minimum/maximum`);
      if (types.includes('array')) {
        if (schema.maxItems === undefined) unbounded.push(`${where}: array without maxItems`);
        visit(schema.items as Json, `${where}[]`, seen);
      }
      if (types.includes('object') || schema.properties) {
        for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, Json>))
          visit(prop, `${where}.${name}`, seen);
        const extra = schema.additionalProperties;
        // `{}` beside declared properties is a loose object (unknown fields ignored), not a map.
        const passthrough = extra && typeof extra === 'object' && Object.keys(extra).length === 0 && schema.properties;
        if (extra && typeof extra === 'object' && !passthrough) {
          if (schema.maxProperties === undefined) unbounded.push(`${where}: map without maxProperties`);
          visit(extra as Json, `${where}.*`, seen);
        }
      }
    };
    // Webhooks carry what the provider sends: they are bounded by their body limits instead.
    const webhooks = new Set(operations.filter((o) => o.auth === 'webhook').map((o) => `${o.method.toUpperCase()} ${o.path}`));
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      for (const [method, op] of Object.entries(methods)) {
        const at = `${method.toUpperCase()} ${path}`;
        if (webhooks.has(at)) continue;
        for (const p of (op.parameters ?? []) as Json[]) visit(p.schema as Json, `${at} ${p.in} ${p.name}`, new Set());
        for (const [type, content] of Object.entries(
          ((op.requestBody as Json | undefined)?.content ?? {}) as Record<string, Json>,
        )) {
          visit(content.schema as Json, `${at} body(${type})`, new Set());
        }
      }
    }
    expect(unbounded).toEqual([]);
  });
});

/**
 * Path and query integers travel as text: the document states each one as an integer with its range
 * and the pattern of its spelling, and the operation's own schema reads exactly that spelling
 * (docs/api.md#conventions). An id schema meant for JSON (`id`) in a path would refuse every request.
 */
describe('integers in the path and the query', () => {
  it('are documented with a pattern of plain digits, and read as the document says', async () => {
    const doc = await jsonOf(await api.get('/api/v1/openapi.json'));
    const checked: string[] = [];
    for (const op of operations) {
      if (op.auth === 'webhook') continue;
      const parameters = (doc.paths[op.path][op.method].parameters ?? []) as { name: string; in: string; schema: Json }[];
      for (const p of parameters.filter((p) => p.schema.type === 'integer' && p.in !== 'header')) {
        const at = `${op.method.toUpperCase()} ${op.path} ${p.in} ${p.name}`;
        expect(p.schema, at).toMatchObject({ minimum: 1, pattern: '^[1-9][0-9]*$' });
        const schema = (p.in === 'path' ? op.params : op.query) as z.ZodObject;
        const read = (value: string) => (schema.shape[p.name] as z.ZodType).safeParse(value);
        expect(read('1').data, at).toBe(1);
        expect(read(String(p.schema.maximum)).data, at).toBe(p.schema.maximum);
        for (const bad of ['0', '-4', '1.5', 'abc', '01', '+1'])
          expect(
            read(bad).error?.issues.map((i) => i.code),
            `${at} = ${bad}`,
          ).toEqual(['invalid_format']);
        expect(
          read(String(Number(p.schema.maximum) + 1)).error?.issues.map((i) => i.code),
          at,
        ).toEqual(['too_big']);
        checked.push(at);
      }
    }
    // Every id in a path, the ids and pages of the queries.
    expect(checked.length).toBeGreaterThan(60);
    expect(checked).toContain('GET /businesses/{business_id}/conversations path business_id');
    expect(checked).toContain('GET /businesses/{business_id}/conversations query location_id');
  });
});

type Json = Record<string, unknown> & { $ref?: string; type?: unknown; items?: unknown };
