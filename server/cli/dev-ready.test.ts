import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { printWhenReady } from './dev-ready';

const health = (_req: http.IncomingMessage, res: http.ServerResponse) => res.end('ok');

it('prints the welcome only once the web server answers, not while it is starting', async () => {
  // A free port, closed again: the "web server" listens on it 700 ms later.
  const probe = http.createServer(health);
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const printed: { text: string; at: number }[] = [];
  const server = http.createServer(health);
  let listeningAt = 0;
  setTimeout(() => server.listen(port, '127.0.0.1', () => (listeningAt = Date.now())), 700);
  try {
    const ready = await printWhenReady(`http://127.0.0.1:${port}/api/v1/health/live`, () => ['', '  Inbox login:   link'], {
      alive: () => true,
      print: (text) => printed.push({ text, at: Date.now() }),
    });
    expect(ready).toBe(true);
    expect(printed).toHaveLength(1);
    expect(printed[0]!.text).toContain('Inbox login:   link');
    expect(listeningAt).toBeGreaterThan(0);
    expect(printed[0]!.at).toBeGreaterThanOrEqual(listeningAt);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

it('prints it anyway, after why, when the web process has died', async () => {
  const printed: string[] = [];
  const warned: string[] = [];
  const ready = await printWhenReady('http://127.0.0.1:9/api/v1/health/live', () => ['  Inbox login:   link'], {
    alive: () => false,
    print: (text) => printed.push(text),
    warn: (text) => warned.push(text),
  });
  expect(ready).toBe(false);
  expect(warned[0]).toMatch(/the web server: the process exited before it answered: the link below may not work yet/);
  expect(printed).toEqual(['  Inbox login:   link']);
});
