import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConnection } from './http-load';

// The load client reads answers by their framing alone: if it took one answer's end for another's,
// every later status on the connection would be wrong, so each test checks a sequence of them.
let server: http.Server;
let base: string;
const seenHeaders: http.IncomingHttpHeaders[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seenHeaders.push(req.headers);
    const url = new URL(req.url!, 'http://x');
    const status = Number(url.searchParams.get('status') ?? 200);
    if (url.pathname === '/chunked') {
      // No Content-Length: Node sends it chunked, here in three chunks written apart.
      res.writeHead(status, { 'content-type': 'application/json' });
      res.write('{"part":1,');
      setTimeout(() => {
        res.write('"text":"' + 'x'.repeat(70_000) + '",');
        setTimeout(() => res.end('"part":3}'), 5);
      }, 5);
    } else if (url.pathname === '/length') {
      const body = JSON.stringify({ detail: 'not found', pad: 'y'.repeat(20_000) });
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    } else if (url.pathname === '/empty') {
      res.writeHead(204).end();
    } else {
      req.socket.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('loadConnection', () => {
  it('reads chunked, sized and empty answers one after another on one keep-alive connection', async () => {
    const connection = loadConnection(base, { 'x-api-key': 'k' });
    try {
      const statuses: number[] = [];
      for (const path of ['/chunked', '/length?status=404', '/empty', '/chunked?status=503', '/length', '/chunked?status=201']) {
        statuses.push(await connection.get(path));
      }
      expect(statuses).toEqual([200, 404, 204, 503, 200, 201]);
      expect(seenHeaders.at(-1)!['x-api-key']).toBe('k');
      expect(new Set(seenHeaders.map((h) => h.host))).toEqual(new Set([base.slice('http://'.length)]));
    } finally {
      connection.close();
    }
  });

  it('reads answers that arrive a byte at a time (a head or a chunk-size line split across packets)', async () => {
    const answers = [
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1a\r\n{"a":"' + 'b'.repeat(18) + '"}\r\n3\r\n[1]\r\n0\r\n\r\n',
      'HTTP/1.1 404 Not Found\r\ncontent-length: 5\r\n\r\n{"x"}',
    ];
    let next = 0;
    const raw = net.createServer((socket) => {
      socket.setNoDelay(true);
      socket.on('data', () => {
        const bytes = Buffer.from(answers[next++ % answers.length]!);
        let i = 0;
        const drip = () => {
          if (i < bytes.length) socket.write(bytes.subarray(i, ++i), () => setImmediate(drip));
        };
        drip();
      });
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    const connection = loadConnection(`http://127.0.0.1:${(raw.address() as AddressInfo).port}`, {});
    try {
      expect([await connection.get('/'), await connection.get('/'), await connection.get('/')]).toEqual([200, 404, 200]);
    } finally {
      connection.close();
      await new Promise((resolve) => raw.close(resolve));
    }
  });

  it('fails the request in flight when the server drops the connection', async () => {
    const connection = loadConnection(base, {});
    try {
      await expect(connection.get('/drop')).rejects.toThrow();
    } finally {
      connection.close();
    }
  });
});
