import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { env } from '@/server/env';
import { WebhookPolicy, postWebhook } from '@/server/lib/public-post';
import { logger } from '@/server/logger';
import { startOutgoingWebhooks } from '@/workers/outgoing-webhooks';

export type Received = { url: string; headers: http.IncomingHttpHeaders; body: string };

/**
 * For a whole test file: a local receiver of outgoing webhooks that answers 200 and keeps every
 * request, and the worker's outgoing-webhooks loop (the event log's dispatch and the sender, as in
 * production) posting to it. `url(path)` is an address on the receiver to register as an endpoint.
 */
export function webhookReceiverPerFile(): { received: Received[]; url: (path: string) => string } {
  process.env.WEBHOOK_ALLOW_PRIVATE_URLS = 'true'; // the receiver is on 127.0.0.1
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({ url: req.url ?? '', headers: req.headers, body });
      res.writeHead(200).end('{}');
    });
  });
  let worker: ReturnType<typeof startOutgoingWebhooks>;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const policy = new WebhookPolicy({ allowPrivate: true, timeoutMs: 5_000 });
    worker = startOutgoingWebhooks(env(), logger, (url, body, headers) => postWebhook(url, body, headers, policy));
  });
  afterAll(async () => {
    await worker.stop();
    await new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  });
  return { received, url: (path) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}` };
}
