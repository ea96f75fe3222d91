import path from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import type { NextConfig } from 'next';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { logger } from '@/server/logger';
import { createTenant, PLATFORM_KEY } from '@/server/testing/factories';
import { api, jsonOf } from '@/server/testing/http';
import { defineOperation } from './operation';
import { route } from './route';

/**
 * The REST access log (server/web/access-log.ts, written by the wrapper in server/http/route.ts):
 * one `request` line per request with method, path, status, duration and request id, and nothing
 * of the credentials, the query string or the bodies. The product's logger is silent in tests: each
 * request's logger (`logger.child`) is swapped for one writing to memory.
 */
type Line = Record<string, unknown> & { msg?: string };
let written: string[];

beforeEach(() => {
  written = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const memory = pino({ level: 'info', base: null }, sink);
  vi.spyOn(logger, 'child').mockImplementation((bindings) => memory.child(bindings));
});
afterEach(() => vi.restoreAllMocks());

const lines = (): Line[] => written.map((l) => JSON.parse(l) as Line);
const requestLines = () => lines().filter((l) => l.msg === 'request');

describe('the REST access log', () => {
  it('writes one line per request: method, path, status, ms and request id, never a credential, query or body', async () => {
    const { business, owner } = await createTenant();
    // A platform key and a body in, a bearer token and a login link out.
    const issued = await api.post('/api/v1/auth/token', {
      headers: { 'x-api-key': PLATFORM_KEY(), 'x-request-id': 'req-token-1' },
      body: { business_id: business.id, staff_id: owner.id },
    });
    expect(issued.status).toBe(200);
    const { access_token: accessToken, login_url: loginUrl } = await jsonOf(issued);
    // The bearer token in, a secret in the query string.
    const read = await api.get(`/api/v1/businesses/${business.id}/staffs/${owner.id}?secret=query-secret-1`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(read.status).toBe(200);
    // A refused body (422) is logged like any answer, without the body.
    const refused = await api.post('/api/v1/auth/token', {
      headers: { 'x-api-key': PLATFORM_KEY() },
      body: { business_id: business.id, staff_id: 'body-secret-1' },
    });
    expect(refused.status).toBe(422);

    const logged = requestLines();
    expect(logged).toHaveLength(3);
    expect(logged[0]).toEqual({
      level: 30,
      time: expect.any(Number),
      request_id: 'req-token-1',
      method: 'POST',
      path: '/api/v1/auth/token',
      status: 200,
      ms: expect.any(Number),
      msg: 'request',
    });
    expect(logged[1]).toMatchObject({
      method: 'GET',
      path: `/api/v1/businesses/${business.id}/staffs/${owner.id}`,
      status: 200,
      request_id: read.headers.get('x-request-id'),
    });
    expect(logged[2]).toMatchObject({ method: 'POST', path: '/api/v1/auth/token', status: 422 });
    for (const line of logged) {
      expect(Object.keys(line).sort()).toEqual(['level', 'method', 'ms', 'msg', 'path', 'request_id', 'status', 'time']);
      expect(line.ms).toBeGreaterThanOrEqual(0);
    }

    const everything = written.join('\n');
    const loginCode = new URL(loginUrl as string).searchParams.get('token')!;
    for (const secret of [PLATFORM_KEY(), accessToken as string, loginCode, 'query-secret-1', 'body-secret-1']) {
      expect(everything).not.toContain(secret);
    }
  });

  it('a request that fails inside still logs one line, with its 500; the error has a line of its own', async () => {
    const op = defineOperation({
      operationId: 'accessLogProbe',
      method: 'get',
      path: '/access-log-probe',
      tag: 'test',
      summary: 'fails',
      auth: 'none',
    });
    const failing = route(op, async () => {
      throw new Error('boom');
    });
    const res = await failing(new Request('http://localhost:3000/api/v1/access-log-probe?token=query-secret-2'));
    expect(res.status).toBe(500);
    expect(requestLines()).toEqual([expect.objectContaining({ method: 'GET', path: '/api/v1/access-log-probe', status: 500 })]);
    expect(lines().filter((l) => l.msg === 'internal error')).toHaveLength(1);
    expect(written.join('\n')).not.toContain('query-secret-2');
  });

  it('is the only line: Next.js’s own request log, which would repeat it with its query string, is off', async () => {
    const file = pathToFileURL(path.resolve(import.meta.dirname, '../../next.config.mjs')).href;
    const { default: nextConfig } = (await import(/* @vite-ignore */ file)) as { default: NextConfig };
    expect(nextConfig.logging).toEqual({ incomingRequests: false });
  });
});
