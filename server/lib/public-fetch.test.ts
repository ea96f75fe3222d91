import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startHttpsServer, TEST_TLS } from '@/server/testing/tls';
import { fetchPublic, type FetchPolicy } from './public-fetch';

/**
 * fetchPublic's https-only mode and its one deadline (docs/api.md#mms): the MMS media route fetches
 * Twilio's storage through it, email attachments by URL too. Local servers stand in for the
 * outside; the policy lets 127.0.0.1 through and trusts the test certificate.
 */

const local: Partial<FetchPolicy> = { isAllowedAddress: (a) => a === '127.0.0.1', ca: TEST_TLS.cert };
const servers: { close: () => Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function httpServer(handler: http.RequestListener) {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url!);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const s = {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  servers.push(s);
  return s;
}

const redirect = (res: http.ServerResponse, location: string) => {
  res.writeHead(302, { Location: location, 'Content-Length': 0 });
  res.end();
};

describe('fetchPublic', () => {
  it('with httpsOnly, refuses an http URL and a redirect down to http before connecting to it', async () => {
    const sink = await httpServer((_req, res) => res.end('secret'));
    const tls = await startHttpsServer((req, res) =>
      req.url === '/down' ? redirect(res, `${sink.origin}/stolen`) : res.end('fine'),
    );
    servers.push(tls);
    const policy = { ...local, maxBytes: 1000, httpsOnly: true };
    expect((await fetchPublic(`${tls.origin}/ok`, policy)).bytes.toString()).toBe('fine');
    await expect(fetchPublic(`${tls.origin}/down`, policy)).rejects.toMatchObject({ name: 'FetchRefused', reason: 'bad_url' });
    await expect(fetchPublic(`${sink.origin}/direct`, policy)).rejects.toMatchObject({ reason: 'bad_url' });
    expect(sink.hits).toEqual([]);
    // Without it (email attachments), http stays allowed.
    expect((await fetchPublic(`${tls.origin}/down`, { ...local, maxBytes: 1000 })).bytes.toString()).toBe('secret');
  });

  it('cuts a server that trickles its answer at the deadline, however steadily the bytes come', async () => {
    const trickle = await httpServer((_req, res) => {
      // Headers a byte every 50 ms: never idle long enough for a socket timeout, never done.
      const socket = res.socket!;
      socket.write('HTTP/1.1 200 OK\r\nX-Slow: ');
      const timer = setInterval(() => (socket.writable ? socket.write('a') : clearInterval(timer)), 50);
      socket.on('close', () => clearInterval(timer));
    });
    const started = Date.now();
    await expect(fetchPublic(`${trickle.origin}/slow`, { ...local, maxBytes: 1000, timeoutMs: 500 })).rejects.toMatchObject({
      name: 'FetchRefused',
      reason: 'failed',
    });
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('gives a chain of redirects one deadline in all, not one per hop', async () => {
    const chain = await httpServer((req, res) => {
      const hop = Number(req.url!.slice(1));
      setTimeout(() => (hop < 3 ? redirect(res, `/${hop + 1}`) : res.end('end')), 300);
    });
    const policy = { ...local, maxBytes: 1000 };
    await expect(fetchPublic(`${chain.origin}/1`, { ...policy, timeoutMs: 700 })).rejects.toMatchObject({ reason: 'failed' });
    expect((await fetchPublic(`${chain.origin}/1`, { ...policy, timeoutMs: 3000 })).bytes.toString()).toBe('end');
  });
});
