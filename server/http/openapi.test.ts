import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { api, jsonOf, match } from '@/server/testing/http';
import { operations } from './operations';

describe('GET /api/v1/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document with both security schemes and the seed schema names', async () => {
    const res = await api.get('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    const doc = await jsonOf(res);
    expect(doc.openapi).toBe('3.1.0');
    // Throws on any structural error or dangling $ref.
    await SwaggerParser.validate(structuredClone(doc));
    expect(Object.keys(doc.components.securitySchemes)).toEqual(expect.arrayContaining(['ApiKey', 'SessionCookie']));
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-KEY' });
    expect(doc.components.securitySchemes.SessionCookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'session' });
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['HTTPValidationError', 'ValidationError', 'AuthParameters', 'AuthTokenResponse', 'SessionExpiryRequest', 'Health', 'HealthService', 'UpdateSuccessResponse', 'LocationResponse']),
    );
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
