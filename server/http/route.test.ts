import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLocation, createTenant, PLATFORM_KEY } from '@/server/testing/factories';
import { api, jsonOf } from '@/server/testing/http';
import { twilioRequest } from '@/server/testing/webhooks';
import { businessPath, id, isoTimestamp, paginationQuery, queryBoolean } from '@/server/schemas/common';
import { defineOperation } from './operation';
import { MAX_BODY_BYTES, route } from './route';

// A synthetic operation exercising every part of the wrapper the real ones use.
const echoOp = defineOperation({
  operationId: 'echo',
  method: 'post',
  path: '/businesses/{business_id}/echo',
  tag: 'test',
  summary: 'echo',
  auth: 'any',
  params: businessPath,
  query: z.object({
    ...paginationQuery,
    flag: queryBoolean.optional(),
    status: z.array(z.enum(['open', 'resolved'])).optional(),
  }),
  body: z.object({
    messages: z.array(z.object({ to_number: z.string().min(3), client_id: id.optional() })).min(1),
    sent_at: isoTimestamp.optional(),
  }),
});
const echo = route(echoOp, async ({ params, query, body }) => ({ params, query, body }));

function callEcho(opts: { businessId?: string | number; query?: string; headers?: Record<string, string>; body?: string } = {}) {
  const url = `http://localhost:3000/api/v1/businesses/${opts.businessId ?? 1}/echo${opts.query ?? ''}`;
  return echo(
    new Request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': PLATFORM_KEY(), ...opts.headers },
      body: opts.body ?? JSON.stringify({ messages: [{ to_number: '+14155550123' }] }),
    }),
    { params: Promise.resolve({ business_id: String(opts.businessId ?? 1) }) },
  );
}

describe('validation errors (422, FastAPI shape)', () => {
  it('names the path parameter', async () => {
    const res = await callEcho({ businessId: 'abc' });
    expect(res.status).toBe(422);
    const body = await jsonOf(res);
    expect(body.detail).toHaveLength(1);
    expect(body.detail[0]).toMatchObject({ loc: ['path', 'business_id'], msg: expect.any(String), type: expect.any(String) });
  });

  it('names query parameters, including repeated ones', async () => {
    const { business } = await createTenant();
    const res = await callEcho({ businessId: business.id, query: '?page=0&page_size=500&flag=maybe&status=open&status=closed' });
    expect(res.status).toBe(422);
    const locs = (await jsonOf(res)).detail.map((d: { loc: unknown[] }) => d.loc);
    expect(locs).toEqual(
      expect.arrayContaining([
        ['query', 'page'],
        ['query', 'page_size'],
        ['query', 'flag'],
        ['query', 'status', 1],
      ]),
    );
  });

  it('parses valid query strings, with defaults', async () => {
    const { business } = await createTenant();
    const res = await callEcho({ businessId: business.id, query: '?flag=false&status=open&status=resolved' });
    expect(res.status).toBe(200);
    expect((await jsonOf(res)).query).toEqual({ page: 1, page_size: 25, flag: false, status: ['open', 'resolved'] });
  });

  it('names the body field down to the array index, and marks missing fields', async () => {
    const { business } = await createTenant();
    const res = await callEcho({
      businessId: business.id,
      body: JSON.stringify({
        messages: [{ to_number: '+14155550123' }, { to_number: 'x', client_id: -4 }, {}],
        sent_at: 'yesterday',
      }),
    });
    expect(res.status).toBe(422);
    const detail = (await jsonOf(res)).detail as { loc: unknown[]; type: string }[];
    expect(detail.map((d) => d.loc)).toEqual(
      expect.arrayContaining([
        ['body', 'messages', 1, 'to_number'],
        ['body', 'messages', 1, 'client_id'],
        ['body', 'messages', 2, 'to_number'],
        ['body', 'sent_at'],
      ]),
    );
    expect(detail.find((d) => d.loc.join('.') === 'body.messages.2.to_number')!.type).toBe('missing');
  });

  it('reads timestamps without an offset as UTC, and with one as given', async () => {
    const { business } = await createTenant();
    for (const [input, expected] of [
      ['2026-11-20T14:03:05', '2026-11-20T14:03:05.000Z'],
      ['2026-11-20T14:03:05.123+02:00', '2026-11-20T12:03:05.123Z'],
      ['2026-11-20T14:03:05Z', '2026-11-20T14:03:05.000Z'],
    ]) {
      const res = await callEcho({
        businessId: business.id,
        body: JSON.stringify({ messages: [{ to_number: '+1415' }], sent_at: input }),
      });
      expect(res.status).toBe(200);
      expect((await jsonOf(res)).body.sent_at).toBe(expected);
    }
  });

  it('an empty messages array is a 422, not a 413', async () => {
    const { business } = await createTenant();
    const res = await callEcho({ businessId: business.id, body: JSON.stringify({ messages: [] }) });
    expect(res.status).toBe(422);
  });
});

describe('malformed and oversized bodies', () => {
  it('400 for malformed JSON and for a non-JSON content type', async () => {
    const { business } = await createTenant();
    for (const [body, headers] of [
      ['{"messages": [', {}],
      ['not json at all', {}],
      ['messages=1', { 'content-type': 'application/x-www-form-urlencoded' }],
    ] as const) {
      const res = await callEcho({ businessId: business.id, body, headers });
      expect(res.status).toBe(400);
      expect(await jsonOf(res)).toEqual({ detail: expect.any(String) });
    }
  });

  it('413 for a body over 10 MiB, whether or not Content-Length says so', async () => {
    const { business } = await createTenant();
    const big = JSON.stringify({ messages: [{ to_number: 'x'.repeat(MAX_BODY_BYTES) }] });
    const declared = await callEcho({ businessId: business.id, body: big });
    expect(declared.status).toBe(413);
    // A streamed body carries no Content-Length: the limit is enforced while reading.
    const stream = new ReadableStream({
      start(c) {
        const chunk = new TextEncoder().encode('x'.repeat(1024 * 1024));
        for (let i = 0; i < 11; i++) c.enqueue(chunk);
        c.close();
      },
    });
    const res = await echo(
      new Request(`http://localhost:3000/api/v1/businesses/${business.id}/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': PLATFORM_KEY() },
        body: stream,
        duplex: 'half',
      } as RequestInit),
      { params: Promise.resolve({ business_id: String(business.id) }) },
    );
    expect(res.status).toBe(413);
  });
});

describe('tenancy on /businesses/{business_id}/…', () => {
  it('a business key or session on another business is 403; the platform key on a missing business is 404', async () => {
    const a = await createTenant();
    const b = await createTenant();
    await createLocation(b.business.id, { name: 'Downtown' });
    const asKey = await api.get(`/api/v1/businesses/${b.business.id}/locations`, { headers: { 'x-api-key': a.apiKey } });
    expect(asKey.status).toBe(403);
    const asSession = await api.get(`/api/v1/businesses/${b.business.id}/locations`, {
      headers: { authorization: `Bearer ${a.sessionToken}` },
    });
    expect(asSession.status).toBe(403);
    const missing = await api.get('/api/v1/businesses/987654/locations', { headers: { 'x-api-key': PLATFORM_KEY() } });
    expect(missing.status).toBe(404);
    expect(await jsonOf(missing)).toEqual({ detail: 'Business not found' });
    const own = await api.get(`/api/v1/businesses/${b.business.id}/locations`, { headers: { 'x-api-key': b.apiKey } });
    expect(own.status).toBe(200);
    expect((await jsonOf(own)).map((l: { name: string }) => l.name)).toEqual(['Downtown']);
  });

  it('a key that differs by one character is unknown: 401', async () => {
    const a = await createTenant();
    const res = await api.get(`/api/v1/businesses/${a.business.id}/locations`, { headers: { 'x-api-key': `${a.apiKey}x` } });
    expect(res.status).toBe(401);
  });
});

describe('X-Request-Id', () => {
  it('echoes a well-formed caller id and replaces a malformed one with a UUID', async () => {
    const good = await api.get('/api/v1/health', { headers: { 'x-request-id': 'abc-123_x.y' } });
    expect(good.headers.get('x-request-id')).toBe('abc-123_x.y');
    const bad = await api.get('/api/v1/health', { headers: { 'x-request-id': 'has spaces<script>' } });
    expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const none = await api.post('/api/v1/auth/token', { body: {} });
    expect(none.status).toBe(401);
    expect(none.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('an internal fault is a 500 with the request id, never the stack', async () => {
    const boom = route({ ...echoOp, body: undefined, query: undefined }, async () => {
      throw new Error('secret internals');
    });
    const { business } = await createTenant();
    const res = await boom(
      new Request(`http://localhost:3000/x`, {
        method: 'POST',
        headers: { 'x-api-key': PLATFORM_KEY(), 'x-request-id': 'req-1' },
      }),
      { params: Promise.resolve({ business_id: String(business.id) }) },
    );
    expect(res.status).toBe(500);
    expect(await jsonOf(res)).toEqual({ detail: 'Internal error', request_id: 'req-1' });
  });
});

describe('webhook operations (auth: webhook, verifiedBy)', () => {
  const hookOp = defineOperation({
    operationId: 'hook',
    method: 'post',
    path: '/test/hook',
    tag: 'test',
    summary: 'hook',
    auth: 'webhook',
    verifiedBy: 'twilio-signature',
    maxBodyBytes: 1024,
  });
  const path = '/api/v1/test/hook';
  const seen: unknown[] = [];
  const hook = route(hookOp, async ({ form, caller }) => {
    seen.push({ form, caller });
    return new Response(null, { status: 200 });
  });
  const post = (init: { headers: Record<string, string>; body: string }) =>
    hook(new Request(`http://localhost:3000${path}`, { method: 'POST', ...init }));

  it('a signed request reaches the handler with the verified form and no caller', async () => {
    seen.length = 0;
    const res = await post(twilioRequest(path, { MessageSid: 'SM1', Body: 'hi' }));
    expect(res.status).toBe(200);
    expect(seen).toEqual([{ form: { params: { MessageSid: 'SM1', Body: 'hi' }, cleaned: false }, caller: undefined }]);
  });

  it('an unsigned or tampered request is the same 403 as before, with a request id, and never reaches the handler', async () => {
    seen.length = 0;
    for (const init of [
      twilioRequest(path, { MessageSid: 'SM1' }, { signature: null }),
      twilioRequest(path, { MessageSid: 'SM1' }, { signedParams: { MessageSid: 'SM2' } }),
    ]) {
      const res = await post({ ...init, headers: { ...init.headers, 'x-request-id': 'hook-1' } });
      expect(res.status).toBe(403);
      expect(await jsonOf(res)).toEqual({ detail: 'Invalid Twilio signature' });
      expect(res.headers.get('x-request-id')).toBe('hook-1');
    }
    // Past the body limit: 413 before the signature is looked at.
    const big = await post(twilioRequest(path, { Body: 'x'.repeat(2000) }, { signature: null }));
    expect(big.status).toBe(413);
    expect(seen).toEqual([]);
  });

  it('route() refuses a webhook operation without a verifier, and a verifier on any other operation', () => {
    const { verifiedBy: _, ...unverified } = hookOp;
    expect(() => route(unverified, async () => null)).toThrow(/verifiedBy/);
    expect(() => route({ ...echoOp, verifiedBy: 'sendgrid-signature' }, async () => null)).toThrow(/verifiedBy/);
  });
});
