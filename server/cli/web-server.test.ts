import net from 'node:net';
import { eq } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { freePort } from '@/db/embedded';
import { messages } from '@/db/schema';
import { TWILIO_WEBHOOK_PATHS, twilioSid, twilioWebhookRequest } from '@/server/providers/webhook-requests';
import { createSmsNumber, createTenant } from '@/server/testing/factories';
import { spawnProc, waitForOk, type Proc } from './child-process';
import { ensureProductionBuild } from './production-build';

/**
 * The production web server (server/cli/web-server.ts) as a real process on the production build
 * in .next-e2e (rebuilt first when older than the sources), against this file's own database.
 */
const DIST_DIR = '.next-e2e';
const TWILIO_TOKEN = 'web-server-test-twilio-token';
const started: Proc[] = [];

beforeAll(() => ensureProductionBuild(DIST_DIR), 600_000);
afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.stop(5_000)));
});

async function startWeb(env: Record<string, string> = {}) {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const web = spawnProc(
    'web',
    process.execPath,
    ['--import', 'tsx', 'server/cli/web-server.ts', '--port', String(port), '--hostname', '127.0.0.1'],
    {
      env: {
        ...process.env,
        NODE_ENV: 'production',
        NEXT_DIST_DIR: DIST_DIR,
        PUBLIC_BASE_URL: baseUrl,
        SMS_PROVIDER: 'sandbox',
        EMAIL_PROVIDER: 'sandbox',
        TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
        LOG_LEVEL: 'info',
        ...env,
      },
    },
  );
  started.push(web);
  await waitForOk(`${baseUrl}/api/v1/health/live`, { alive: web.alive, what: `web server\n${web.output()}` });
  return { web, port, baseUrl };
}

/** A raw HTTP/1.1 exchange: the request is written in parts, when the test says so. */
function rawRequest(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString()));
  socket.on('error', () => {});
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
  const connected = new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return { write: async (text: string) => (await connected, socket.write(text)), closed, socket, received: () => received };
}

function parseResponse(raw: string) {
  const [head = '', ...rest] = raw.split('\r\n\r\n');
  const status = Number(head.match(/^HTTP\/1\.1 (\d{3})/)?.[1]);
  const chunked = /transfer-encoding: chunked/i.test(head);
  let body = rest.join('\r\n\r\n');
  // Chunked: size lines and payloads alternate; the payloads joined are the body.
  if (chunked)
    body = body
      .split('\r\n')
      .filter((_, i) => i % 2 === 1)
      .join('');
  return { status, head, body };
}

/** An inbox events subscription (tRPC over SSE), read as text until the server ends it. */
async function openEvents(baseUrl: string, sessionToken: string) {
  const res = await fetch(`${baseUrl}/api/trpc/inbox.events`, {
    headers: { authorization: `Bearer ${sessionToken}`, accept: 'text/event-stream' },
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
  let text = '';
  let endedAt: number | null = null;
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const ended = (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    endedAt = Date.now();
  })();
  const deadline = Date.now() + 10_000;
  while (!text.includes('event: connected')) {
    if (Date.now() > deadline) throw new Error(`no connected event: ${text}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { text: () => text, ended, endedAt: () => endedAt };
}

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });

describe('web server: graceful shutdown', () => {
  it('on SIGTERM: live health 503, new connections refused, the request in flight answered, SSE ended, exit 0', async () => {
    const tenant = await createTenant();
    const number = await createSmsNumber(tenant.business.id);
    const { web, port, baseUrl } = await startWeb({ SHUTDOWN_TIMEOUT_SECONDS: '10' });

    const events = await openEvents(baseUrl, tenant.sessionToken);

    // A slow request: a signed inbound SMS whose body arrives half before SIGTERM, half after.
    const path = TWILIO_WEBHOOK_PATHS.smsIncoming;
    const sid = twilioSid('SM');
    const params = {
      MessageSid: sid,
      AccountSid: `AC${'f'.repeat(32)}`,
      From: '+16465550123',
      To: number.phoneNumber,
      Body: 'sent while draining',
      NumMedia: '0',
    };
    const { headers, body } = twilioWebhookRequest(`${baseUrl}${path}`, params, TWILIO_TOKEN);
    const slow = rawRequest(port);
    const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    await slow.write(head + body.slice(0, 20));
    // A liveness probe whose headers are not complete yet: it is answered after SIGTERM.
    const probe = rawRequest(port);
    await probe.write(`GET /api/v1/health/live HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
    await new Promise((r) => setTimeout(r, 300)); // both reached the server

    const sigterm = Date.now();
    web.kill('SIGTERM', 'leader');

    // New connections are refused at once.
    let isRefused = false;
    for (let i = 0; i < 40 && !isRefused; i++) {
      isRefused = await refused(port);
      if (!isRefused) await new Promise((r) => setTimeout(r, 50));
    }
    expect(isRefused).toBe(true);

    // The open events stream ends promptly, with a retryable error (the client reconnects).
    await Promise.race([events.ended, new Promise((r) => setTimeout(r, 5_000))]);
    expect(events.endedAt(), `SSE still open:\n${events.text()}`).not.toBeNull();
    expect(events.endedAt()! - sigterm).toBeLessThan(3_000);
    expect(events.text()).toContain('event: serialized-error');
    expect(events.text()).toContain('SERVICE_UNAVAILABLE');

    // The liveness probe, completed now, says draining.
    await probe.write('\r\n');
    const live = parseResponse(await probe.closed);
    expect(live.status).toBe(503);
    expect(JSON.parse(live.body)).toMatchObject({ status: 'draining' });
    expect(live.head).toMatch(/connection: close/i);

    // The slow request completes after all, and its work is done.
    expect(web.alive()).toBe(true);
    await slow.write(body.slice(20));
    const answer = parseResponse(await slow.closed);
    expect(answer.status, answer.head + answer.body).toBe(200);
    const stored = await db.select().from(messages).where(eq(messages.providerMessageId, sid));
    expect(stored).toHaveLength(1);
    expect(stored[0]!.content).toBe('sent while draining');

    const exit = await web.exited;
    expect(exit.code, web.output()).toBe(0);
    expect(exit.at - sigterm).toBeLessThan(10_000);
    expect(web.output()).toContain('"outcome":"drained"');
  }, 60_000);

  it('past SHUTDOWN_TIMEOUT_SECONDS: the connections left are cut and it exits 1', async () => {
    const { web, port } = await startWeb({ SHUTDOWN_TIMEOUT_SECONDS: '2' });
    // A request that never completes: its body never arrives.
    const stuck = rawRequest(port);
    await stuck.write(
      `POST ${TWILIO_WEBHOOK_PATHS.smsIncoming} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nFrom=`,
    );
    await new Promise((r) => setTimeout(r, 300));
    const sigterm = Date.now();
    web.kill('SIGTERM', 'leader');
    const exit = await web.exited;
    expect(exit.code, web.output()).toBe(1);
    expect(exit.at - sigterm).toBeGreaterThanOrEqual(1_900);
    expect(exit.at - sigterm).toBeLessThan(5_000);
    await stuck.closed; // cut, not left hanging
    expect(web.output()).toContain('drain timed out');
  }, 60_000);
});

describe('web server: keep-alive', () => {
  it('an idle keep-alive connection is still open after 6 s and serves the next request (clients close first)', async () => {
    const { port } = await startWeb();
    const conn = rawRequest(port);
    let ended = false;
    conn.socket.once('end', () => (ended = true));
    const responses = () => conn.received().split('HTTP/1.1 ').length - 1;
    const waitFor = async (n: number) => {
      const deadline = Date.now() + 10_000;
      // Each answer is chunked: complete at its last, empty chunk.
      while (responses() < n || !conn.received().endsWith('\r\n0\r\n\r\n')) {
        if (Date.now() > deadline) throw new Error(`no answer ${n}: ${conn.received()}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const probe = `GET /api/v1/health/live HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`;
    await conn.write(probe);
    await waitFor(1);
    // Past Node's default of 5 s, after which the server closed the connection on its side, so a
    // request sent at that moment failed with ECONNRESET.
    await new Promise((r) => setTimeout(r, 6_000));
    expect(ended).toBe(false);
    await conn.write(probe);
    await waitFor(2);
    expect(conn.received().match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    conn.socket.destroy();
  }, 60_000);
});
