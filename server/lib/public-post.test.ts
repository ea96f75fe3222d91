import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_TLS } from '@/server/testing/tls';
import {
  checkWebhookUrl,
  parseRetryAfter,
  postWebhook,
  RESPONSE_BODY_BYTES,
  WebhookPolicy,
  type WebhookPolicyOptions,
} from './public-post';

/**
 * postWebhook against real local servers (plain http on 127.0.0.1, and https with the test
 * certificate trusted through `ca`), counting the connections each server accepts: a refused
 * address must never be connected to, and kept-alive connections must carry many requests.
 */

const closers: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

type Seen = { method: string; url: string; headers: http.IncomingHttpHeaders; body: string };

async function receiver(handler: http.RequestListener, options: { tls?: boolean } = {}) {
  const seen: Seen[] = [];
  const counted = { connections: 0 };
  const listener: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
      handler(req, res);
    });
  };
  const server = options.tls
    ? https.createServer({ cert: TEST_TLS.cert, key: TEST_TLS.key }, listener)
    : http.createServer(listener);
  // 'connection' is a TCP accept, before any TLS or HTTP.
  server.on('connection', () => counted.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  closers.push(close);
  return { port, origin: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`, seen, counted, close };
}

function policy(options: WebhookPolicyOptions) {
  const p = new WebhookPolicy(options);
  closers.push(() => p.close());
  return p;
}

const open = policy({ allowPrivate: true, timeoutMs: 3000 });
/** Public-only rules, except that 127.0.0.1 counts as public: https receivers on this machine. */
const tlsOnly = policy({ allowPrivate: false, isAllowedAddress: (a) => a === '127.0.0.1', ca: TEST_TLS.cert, timeoutMs: 3000 });
const strict = policy({ allowPrivate: false, ca: TEST_TLS.cert, timeoutMs: 3000 });

const json = '{"type":"message.received","data":{"id":"msg_1"}}';

describe('postWebhook', () => {
  it('POSTs the JSON with the given headers, and answers 2xx as ok with status, headers and body', async () => {
    const r = await receiver((_req, res) => res.writeHead(204, { 'X-Receiver': 'yes' }).end());
    const result = await postWebhook(
      `${r.origin}/hooks?x=1`,
      json,
      { 'webhook-id': 'msg_1', 'Content-Type': 'text/plain', Host: 'elsewhere.example' },
      open,
    );
    expect(result).toMatchObject({ ok: true, status: 204, responseBody: '', retryAfterSeconds: null });
    expect(result.responseHeaders).toMatchObject({ 'x-receiver': 'yes' });
    expect(result.error).toBeUndefined();
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(r.seen).toHaveLength(1);
    expect(r.seen[0]).toMatchObject({ method: 'POST', url: '/hooks?x=1', body: json });
    // Ours win over the caller's framing headers.
    expect(r.seen[0]!.headers).toMatchObject({
      'content-type': 'application/json',
      'content-length': String(json.length),
      'webhook-id': 'msg_1',
      host: `127.0.0.1:${r.port}`,
    });
  });

  it('reports 4xx and 5xx as not ok, keeping only the first 2 KiB of a long body, cut on a character boundary', async () => {
    // "é" is two bytes: 2047 "a" then "é…" puts a character across the 2048-byte cut.
    const long = 'a'.repeat(RESPONSE_BODY_BYTES - 1) + 'é'.repeat(100_000);
    const r = await receiver((req, res) =>
      req.url === '/400' ? res.writeHead(400).end('bad signature') : res.writeHead(503).end(long),
    );
    expect(await postWebhook(`${r.origin}/400`, json, {}, open)).toMatchObject({
      ok: false,
      status: 400,
      responseBody: 'bad signature',
    });
    const big = await postWebhook(`${r.origin}/503`, json, {}, open);
    expect(big).toMatchObject({ ok: false, status: 503 });
    expect(big.error).toBeUndefined();
    expect(big.responseBody).toBe('a'.repeat(RESPONSE_BODY_BYTES - 1));
  });

  it('does not follow a redirect: a 3xx is the answer', async () => {
    const r = await receiver((req, res) =>
      req.url === '/moved' ? res.writeHead(307, { Location: '/new' }).end() : res.end('followed'),
    );
    const result = await postWebhook(`${r.origin}/moved`, json, {}, open);
    expect(result).toMatchObject({ ok: false, status: 307, responseHeaders: { location: '/new' } });
    expect(r.seen.map((s) => s.url)).toEqual(['/moved']);
  });

  it('reads Retry-After as seconds or as an HTTP date', async () => {
    const r = await receiver((req, res) =>
      res.writeHead(429, { 'Retry-After': req.url === '/seconds' ? '120' : new Date(Date.now() + 90_000).toUTCString() }).end(),
    );
    expect(await postWebhook(`${r.origin}/seconds`, json, {}, open)).toMatchObject({ status: 429, retryAfterSeconds: 120 });
    const dated = await postWebhook(`${r.origin}/date`, json, {}, open);
    // The date has whole seconds: 89 to 91 s from now, depending on where in the second it was written.
    expect(dated.retryAfterSeconds).toBeGreaterThanOrEqual(88);
    expect(dated.retryAfterSeconds).toBeLessThanOrEqual(91);
  });

  it('times out at the deadline with a receiver that never answers and one that trickles', async () => {
    const silent = await receiver(() => {});
    const trickle = await receiver((_req, res) => {
      // The status line at once, then a body byte every 50 ms that never ends.
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      const timer = setInterval(() => (res.writable ? res.write('a') : clearInterval(timer)), 50);
      res.on('close', () => clearInterval(timer));
    });
    const quick = policy({ allowPrivate: true, timeoutMs: 400 });
    for (const origin of [silent.origin, trickle.origin]) {
      const result = await postWebhook(`${origin}/`, json, {}, quick);
      expect(result).toMatchObject({ ok: false, error: { reason: 'timeout' } });
      expect(result.durationMs).toBeGreaterThanOrEqual(390);
      expect(result.durationMs).toBeLessThan(1000);
    }
  });

  it('counts the look-up in the deadline: a resolver that never answers times out', async () => {
    const hung = policy({ allowPrivate: true, timeoutMs: 300, resolve: () => new Promise(() => {}) });
    const result = await postWebhook('http://receiver.example/hook', json, {}, hung);
    expect(result).toMatchObject({ ok: false, error: { reason: 'timeout' } });
    expect(result.durationMs).toBeLessThan(1000);
  });

  it('refuses a loopback address without connecting to it, and reaches it with allowPrivate', async () => {
    const r = await receiver((_req, res) => res.end('ok'), { tls: true });
    // An IP literal, and a name that resolves to it (through the system resolver).
    for (const url of [`${r.origin}/`, `https://localhost:${r.port}/`]) {
      expect(await postWebhook(url, json, {}, strict)).toMatchObject({ ok: false, error: { reason: 'refused_address' } });
    }
    expect(r.counted.connections).toBe(0);
    const allowed = policy({ allowPrivate: true, ca: TEST_TLS.cert });
    expect(await postWebhook(`https://localhost:${r.port}/`, json, {}, allowed)).toMatchObject({ ok: true, status: 200 });
    expect(r.counted.connections).toBe(1);
  });

  it('refuses a name when any address it resolves to is private, and connects to the address it vetted', async () => {
    const r = await receiver((_req, res) => res.end('ok'), { tls: true });
    const mixed = policy({
      allowPrivate: false,
      ca: TEST_TLS.cert,
      isAllowedAddress: (a) => a === '127.0.0.1' || a === '93.184.216.34',
      resolve: async () => [
        { address: '127.0.0.1', family: 4 },
        { address: '10.0.0.5', family: 4 },
      ],
    });
    const refused = await postWebhook(`https://localhost:${r.port}/`, json, {}, mixed);
    expect(refused).toMatchObject({ ok: false, error: { reason: 'refused_address' } });
    expect(refused.error!.message).toContain('10.0.0.5');
    expect(r.counted.connections).toBe(0);
    // The simulated DNS alone decides where a name goes: this one exists nowhere else.
    const pinned = policy({ allowPrivate: true, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    const plain = await receiver((req, res) => res.end(req.headers.host));
    expect(await postWebhook(`http://receiver.example:${plain.port}/`, json, {}, pinned)).toMatchObject({
      ok: true,
      responseBody: `receiver.example:${plain.port}`,
    });
  });

  it('refuses plain http unless allowPrivate, before connecting', async () => {
    const r = await receiver((_req, res) => res.end('ok'));
    expect(await postWebhook(`${r.origin}/`, json, {}, tlsOnly)).toMatchObject({ ok: false, error: { reason: 'bad_url' } });
    expect(await postWebhook('not a url', json, {}, open)).toMatchObject({ ok: false, error: { reason: 'bad_url' } });
    expect(r.counted.connections).toBe(0);
    expect(await postWebhook(`${r.origin}/`, json, {}, open)).toMatchObject({ ok: true });
  });

  it('tells a refused connection from a certificate it cannot trust', async () => {
    const gone = await receiver(() => {});
    await gone.close(); // its port now refuses
    expect(await postWebhook(`${gone.origin}/`, json, {}, open)).toMatchObject({
      ok: false,
      error: { reason: 'connect_failed' },
    });
    const r = await receiver((_req, res) => res.end('ok'), { tls: true });
    const untrusting = policy({ allowPrivate: true });
    expect(await postWebhook(`${r.origin}/`, json, {}, untrusting)).toMatchObject({ ok: false, error: { reason: 'tls' } });
    expect(await postWebhook(`${r.origin}/`, json, {}, tlsOnly)).toMatchObject({ ok: true, status: 200 });
  });

  it('keeps connections alive: 50 POSTs in a row use one, over http and over https', async () => {
    for (const [tls, p] of [
      [false, open],
      [true, tlsOnly],
    ] as const) {
      const r = await receiver((_req, res) => res.end('{"received":true}'), { tls });
      for (let i = 0; i < 50; i++) expect(await postWebhook(`${r.origin}/`, json, {}, p)).toMatchObject({ ok: true });
      expect(r.seen).toHaveLength(50);
      expect(r.counted.connections).toBeLessThanOrEqual(2);
    }
  });

  it('opens at most maxSocketsPerOrigin connections to one receiver, however many requests wait', async () => {
    const r = await receiver((_req, res) => setTimeout(() => res.end('ok'), 20));
    const bounded = policy({ allowPrivate: true, maxSocketsPerOrigin: 4 });
    const results = await Promise.all(Array.from({ length: 40 }, () => postWebhook(`${r.origin}/`, json, {}, bounded)));
    expect(results.every((x) => x.ok)).toBe(true);
    expect(r.counted.connections).toBe(4);
  });

  it('times out a request still waiting for a connection of the pool at its own deadline', async () => {
    const silent = await receiver(() => {});
    const single = policy({ allowPrivate: true, maxSocketsPerOrigin: 1, timeoutMs: 300 });
    const started = Date.now();
    const results = await Promise.all([1, 2].map(() => postWebhook(`${silent.origin}/`, json, {}, single)));
    expect(results.map((x) => x.error?.reason)).toEqual(['timeout', 'timeout']);
    expect(Date.now() - started).toBeLessThan(800);
    expect(silent.counted.connections).toBe(1);
  });

  it('gives a slow answer its whole deadline, whatever the idle timeout of kept-alive connections', async () => {
    const r = await receiver((_req, res) => setTimeout(() => res.end('late'), 300));
    const shortIdle = policy({ allowPrivate: true, idleTimeoutMs: 100, timeoutMs: 2000 });
    expect(await postWebhook(`${r.origin}/`, json, {}, shortIdle)).toMatchObject({ ok: true, responseBody: 'late' });
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  it.each([
    [undefined, null],
    ['0', 0],
    [' 30 ', 30],
    ['99999999999999', 2 ** 31 - 1],
    ['Tue, 01 Jan 2030 00:01:00 GMT', 60],
    ['Tuesday, 01-Jan-30 00:00:30 GMT', 30],
    ['Mon, 31 Dec 2029 23:00:00 GMT', 0],
    ['-5', null],
    ['1.5', null],
    ['soon', null],
    ['Tue, 99 Foo 2030', null],
  ])('%j → %j', (value, expected) => expect(parseRetryAfter(value, now)).toBe(expected));
});

describe('checkWebhookUrl', () => {
  it.each([
    ['https://hooks.example.com/convo?tenant=1', false],
    ['https://93.184.216.34:8443/hook', false],
    ['https://[2606:4700::1111]/hook', false],
    ['http://localhost:4000/hook', true],
    ['http://10.0.0.5/hook', true],
    ['https://receiver/hook', true],
  ])('accepts %s (allowPrivate %s)', (url, allowPrivate) => expect(checkWebhookUrl(url, allowPrivate)).toBeNull());

  it.each([
    ['hooks.example.com/x', false, 'absolute'],
    ['/relative', true, 'absolute'],
    ['http://hooks.example.com/x', false, 'https'],
    ['ftp://hooks.example.com/x', true, 'http or https'],
    ['https://user:secret@hooks.example.com/x', false, 'user name or password'],
    ['https://user@hooks.example.com/x', true, 'user name or password'],
    ['https://hooks.example.com/x#frag', false, 'fragment'],
    ['https://hooks.example.com/x#', false, 'fragment'],
    [`https://hooks.example.com/${'a'.repeat(2030)}`, true, '2,048'],
    ['https://127.0.0.1/x', false, 'non-public address'],
    ['https://0x7f.1/x', false, 'non-public address'],
    ['https://2130706433/x', false, 'non-public address'],
    ['https://[::1]/x', false, 'non-public address'],
    ['https://[::ffff:10.0.0.1]/x', false, 'non-public address'],
    ['https://169.254.169.254/latest/meta-data', false, 'non-public address'],
    ['https://192.168.1.10/x', false, 'non-public address'],
    ['https://localhost/x', false, 'public host'],
    ['https://LOCALHOST./x', false, 'public host'],
    ['https://api.localhost/x', false, 'public host'],
    ['https://printer.local/x', false, 'public host'],
    ['https://db.internal/x', false, 'public host'],
    ['https://nas.home.arpa/x', false, 'public host'],
    ['https://intranet/x', false, 'public host'],
  ])('refuses %s (allowPrivate %s): %s', (url, allowPrivate, message) =>
    expect(checkWebhookUrl(url, allowPrivate)).toContain(message),
  );

  it('takes exactly 2,048 characters', () => {
    const url = 'https://hooks.example.com/';
    expect(checkWebhookUrl(url + 'a'.repeat(2048 - url.length), false)).toBeNull();
    expect(checkWebhookUrl(url + 'a'.repeat(2049 - url.length), false)).toContain('2,048');
  });
});
