import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { waitForOk } from './child-process';

it('waitForOk takes an answer whose body stalls past the poll timeout for "not yet", and polls again', async () => {
  let requests = 0;
  const server = http.createServer((_req, res) => {
    // The first answer sends its head and part of its body, then nothing (a process too busy to finish).
    if (++requests === 1) res.writeHead(200, { 'content-length': '10' }).write('ok');
    else res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    await waitForOk(`http://127.0.0.1:${port}/`, { timeoutMs: 10_000 });
    expect(requests).toBe(2);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
