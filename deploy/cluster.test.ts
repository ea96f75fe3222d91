import http from 'node:http';
import net from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { messages } from '@/db/schema';
import { ensureProductionBuild } from '@/server/cli/production-build';
import { parseEnv } from '@/server/env';
import { inboundEmailPath, TWILIO_WEBHOOK_PATHS, twilioSid, twilioWebhookRequest } from '@/server/providers/webhook-requests';
import { signedMediaUrl } from '@/server/services/messages/media-links';
import { createSmsNumber, createTenant } from '@/server/testing/factories';
import { startCluster, type Cluster } from './cluster';
import { toolForTestFile } from '@/deploy/system-tools';

/**
 * Two web processes and a worker behind HAProxy, on the production build in .next-e2e (rebuilt
 * first when older than the sources) and this file's own database, exactly as an operator runs
 * `npm run deploy:local`; everything below goes through the balancer.
 */
const DIST_DIR = '.next-e2e';
let cluster: Cluster;

/** HAProxy, or undefined: the file is skipped, saying so (never under CI=true). */
const haproxy = toolForTestFile('haproxy', 'deploy/cluster.test.ts');

beforeAll(async () => {
  if (!haproxy) return;
  await ensureProductionBuild(DIST_DIR);
  cluster = await startCluster({
    webs: 2,
    workers: 1,
    databaseUrl: process.env.DATABASE_URL,
    distDir: DIST_DIR,
    build: false,
    env: { SMS_PROVIDER: 'sandbox', EMAIL_PROVIDER: 'sandbox', SHUTDOWN_TIMEOUT_SECONDS: '10' },
  });
}, 600_000);

afterAll(async () => {
  if (!cluster) return;
  const exits = await cluster.stop();
  // Every process still running at the end drained and exited cleanly.
  for (const { name, exit } of exits) expect(exit.code, `${name} exited ${exit.code ?? exit.signal}`).toBe(0);
}, 60_000);

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });

const twilioToken = () => parseEnv(cluster.env).twilio.authToken!;

function inboundSms(to: string, body: string) {
  return {
    MessageSid: twilioSid('SM'),
    AccountSid: `AC${'f'.repeat(32)}`,
    From: '+16465550199',
    To: to,
    Body: body,
    NumMedia: '0',
  };
}

/** Posts a Twilio webhook to the balancer, signed over PUBLIC_BASE_URL + path as Twilio signs it. */
function postSigned(params: Record<string, string>, token = twilioToken()) {
  const path = TWILIO_WEBHOOK_PATHS.smsIncoming;
  const { headers, body } = twilioWebhookRequest(`${cluster.env.PUBLIC_BASE_URL}${path}`, params, token);
  return fetch(`${cluster.url}${path}`, { method: 'POST', headers, body });
}

describe.skipIf(!haproxy)('local deployment behind HAProxy', () => {
  it('PUBLIC_BASE_URL is the balancer: a signed Twilio webhook is stored, a badly signed one refused', async () => {
    expect(cluster.env.PUBLIC_BASE_URL).toBe(cluster.url);
    const tenant = await createTenant();
    const number = await createSmsNumber(tenant.business.id);

    const good = inboundSms(number.phoneNumber, 'through the balancer');
    const res = await postSigned(good);
    expect(res.status, await res.clone().text()).toBe(200);
    const stored = await db.select().from(messages).where(eq(messages.providerMessageId, good.MessageSid));
    expect(stored.map((m) => m.content)).toEqual(['through the balancer']);

    const bad = inboundSms(number.phoneNumber, 'forged');
    const refused = await postSigned(bad, 'not-the-auth-token');
    expect(refused.status).toBe(403);
    expect(await db.select().from(messages).where(eq(messages.providerMessageId, bad.MessageSid))).toHaveLength(0);
  });

  it('the balancer passes the inbox events stream (SSE) through, unbuffered', async () => {
    const tenant = await createTenant();
    const number = await createSmsNumber(tenant.business.id);
    const controller = new AbortController();
    const res = await fetch(`${cluster.url}/api/trpc/inbox.events`, {
      headers: { authorization: `Bearer ${tenant.sessionToken}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    let text = '';
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const read = async (until: string, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (!text.includes(until)) {
        const chunk = await Promise.race([
          reader.read(),
          new Promise<null>((r) => setTimeout(() => r(null), Math.max(deadline - Date.now(), 0))),
        ]);
        if (!chunk || chunk.done) break;
        text += decoder.decode(chunk.value, { stream: true });
      }
      return text.includes(until);
    };
    expect(await read('event: connected', 10_000), text).toBe(true);
    // The stream's business gets an SMS (through the balancer, so maybe via the other web process).
    const sms = inboundSms(number.phoneNumber, 'live');
    expect((await postSigned(sms)).status).toBe(200);
    expect(await read('message.created', 10_000), text).toBe(true);
    controller.abort();
  });

  it('SIGKILL of a web process costs no request sent through the balancer afterwards; restart brings it back', async () => {
    const [victim, survivor] = cluster.webs as [Cluster['webs'][number], Cluster['webs'][number]];
    cluster.kill(victim, 'SIGKILL');
    await victim.exited;
    // Gone for good once its port refuses connections (the whole group dies, not only its leader).
    // HAProxy has not noticed yet: its next health check is up to 500 ms away.
    while (!(await refused(victim.port!))) await new Promise((r) => setTimeout(r, 10));
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await fetch(`${cluster.url}/api/v1/health/live`);
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    const tenant = await createTenant();
    const number = await createSmsNumber(tenant.business.id);
    for (let i = 0; i < 10; i++) {
      const res = await postSigned(inboundSms(number.phoneNumber, `after the kill ${i}`));
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(
      statuses.every((s) => s === 200),
      statuses.join(','),
    ).toBe(true);
    expect(survivor.alive()).toBe(true);
    expect(cluster.haproxy.output()).toMatch(/web1 is DOWN/);

    const back = await cluster.restart(victim);
    expect(cluster.webs[0]).toBe(back);
    expect(back.port).toBe(victim.port);
    const deadline = Date.now() + 10_000;
    while (!/web1 is UP/.test(cluster.haproxy.output()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(cluster.haproxy.output()).toMatch(/web1 is UP/);
  });
});

type Answer = { status: number; retryAfter: string | undefined; body: string };

/**
 * One request to the balancer from the local address `source`: HAProxy's per-source limits see
 * the connection's own address, so each test below takes an address of its own (Linux answers for
 * all of 127.0.0.0/8 on the loopback interface), and none of them touches 127.0.0.1, which the
 * other tests use.
 */
function from(
  source: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<Answer> {
  const { port } = new URL(cluster.url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, method: init.method ?? 'GET', headers: init.headers, localAddress: source, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            retryAfter: res.headers['retry-after'] as string | undefined,
            body: Buffer.concat(chunks).toString(),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

/** A Twilio inbound-SMS webhook from `source`, signed over PUBLIC_BASE_URL + path (`signature: null`: unsigned). */
function smsFrom(source: string, params: Record<string, string>, options: { token?: string; signature?: null } = {}) {
  const path = TWILIO_WEBHOOK_PATHS.smsIncoming;
  const { headers, body } = twilioWebhookRequest(
    `${cluster.env.PUBLIC_BASE_URL}${path}`,
    params,
    options.token ?? twilioToken(),
    {
      signature: options.signature,
    },
  );
  return from(source, path, { method: 'POST', headers, body });
}

/** Runs `n` tasks, `parallel` at a time; their results in order. */
async function pool<T>(n: number, parallel: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

const tally = (statuses: number[]) =>
  Object.fromEntries([...new Set(statuses)].map((s) => [s, statuses.filter((x) => x === s).length]));

describe.skipIf(!haproxy)('per-source limits at the balancer', () => {
  it('hammering /login from one address is refused with 429 and Retry-After past the limit, whatever X-Forwarded-For says', async () => {
    const limit = cluster.balancer.loginPerMinute;
    const statuses: number[] = [];
    let refused: Answer | undefined;
    for (let i = 0; i < limit + 5; i++) {
      // A made-up code (the app answers 401) and a different claimed client each time.
      const res = await from('127.0.0.2', `/login?token=lc_guess${i}`, {
        headers: { 'x-forwarded-for': `203.0.113.${i % 250}` },
      });
      statuses.push(res.status);
      if (res.status === 429) refused ??= res;
    }
    expect(tally(statuses.slice(0, limit))).toEqual({ 401: limit });
    expect(statuses.slice(limit)).toEqual(Array(5).fill(429));
    expect(refused!.retryAfter).toBe('60');
    expect(refused!.body).toContain('Too many sign-in attempts from this address');
    // Another address is not limited, even claiming to be the limited one; the limited address's
    // other requests are not either.
    expect((await from('127.0.0.3', '/login?token=lc_other', { headers: { 'x-forwarded-for': '127.0.0.2' } })).status).toBe(401);
    expect((await from('127.0.0.2', '/api/v1/health/live')).status).toBe(200);
  });

  it('an address whose webhooks keep failing is refused its credential-less ones; a signed one always reaches the app', async () => {
    const tenant = await createTenant();
    const number = await createSmsNumber(tenant.business.id);
    const limit = cluster.balancer.webhookFailuresPerMinute;
    // Forged (wrong token), unsigned, and Inbound Parse with a wrong secret, in turn.
    const failing = (i: number) =>
      i % 3 === 0
        ? smsFrom('127.0.0.4', inboundSms(number.phoneNumber, `forged ${i}`), { token: 'not-the-auth-token' })
        : i % 3 === 1
          ? smsFrom('127.0.0.4', inboundSms(number.phoneNumber, `unsigned ${i}`), { signature: null })
          : from('127.0.0.4', `${inboundEmailPath()}?secret=guess${i}`, {
              method: 'POST',
              headers: { 'content-type': 'text/plain' },
              body: 'x',
            });
    const statuses: number[] = [];
    for (let i = 0; i < limit + 1; i++) statuses.push((await failing(i)).status);
    // Every one of them reached the app and was refused there.
    expect(
      statuses.every((s) => s === 401 || s === 403),
      statuses.join(','),
    ).toBe(true);
    // Past the limit the balancer answers for a request that carries no credential at all.
    const refused = await smsFrom('127.0.0.4', inboundSms(number.phoneNumber, 'unsigned, past the limit'), { signature: null });
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBe('60');
    expect(JSON.parse(refused.body)).toEqual({ detail: expect.stringContaining('signature') });
    // One that carries a signature or a secret still reaches the app, which checks it: providers'
    // addresses are shared by all their customers, so a source's failures may be someone else's.
    const forged = await smsFrom('127.0.0.4', inboundSms(number.phoneNumber, 'forged, past the limit'), {
      token: 'not-the-auth-token',
    });
    expect(forged.status).toBe(403); // refused by the app, not the balancer
    const wrongSecret = await from('127.0.0.4', `${inboundEmailPath()}?secret=guess-again`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    expect([401, 403]).toContain(wrongSecret.status);
    const valid = inboundSms(number.phoneNumber, 'from the same address');
    expect((await smsFrom('127.0.0.4', valid)).status).toBe(200);
    expect(await db.select().from(messages).where(eq(messages.providerMessageId, valid.MessageSid))).toHaveLength(1);
    expect((await from('127.0.0.4', '/api/v1/health/live')).status).toBe(200);
    // Another address's signed webhook goes through.
    const other = inboundSms(number.phoneNumber, 'from another address');
    expect((await smsFrom('127.0.0.5', other)).status).toBe(200);
    expect(await db.select().from(messages).where(eq(messages.providerMessageId, other.MessageSid))).toHaveLength(1);
  });

  it('validly signed webhooks are never limited, at many times the failure limit from one address', async () => {
    const tenant = await createTenant();
    const number = await createSmsNumber(tenant.business.id);
    const n = 5 * cluster.balancer.webhookFailuresPerMinute;
    const sent = Array.from({ length: n }, (_, i) => inboundSms(number.phoneNumber, `valid ${i}`));
    const statuses = await pool(n, 8, async (i) => (await smsFrom('127.0.0.6', sent[i]!)).status);
    expect(tally(statuses)).toEqual({ 200: n });
    const stored = await db
      .select({ sid: messages.providerMessageId })
      .from(messages)
      .where(eq(messages.businessId, tenant.business.id));
    expect(stored).toHaveLength(n);
  });

  it("Twilio's fetches of public media are never limited, failing ones included", async () => {
    const tenant = await createTenant();
    // A 1×1 PNG, uploaded through the balancer.
    const png = Buffer.from(
      '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
      'hex',
    );
    const upload = await fetch(`${cluster.url}/api/v1/businesses/${tenant.business.id}/media`, {
      method: 'POST',
      headers: { 'x-api-key': tenant.apiKey, 'content-type': 'image/png' },
      body: png,
    });
    expect(upload.status, await upload.clone().text()).toBe(200);
    const mediaId = ((await upload.json()) as { media_id: number }).media_id;
    const url = new URL(signedMediaUrl(tenant.business.id, mediaId, Date.now(), parseEnv(cluster.env)));
    const good = `${url.pathname}${url.search}`;
    // Well formed, wrongly signed (one character changed): the route's signature check refuses it.
    const signature = url.searchParams.get('signature')!;
    const bad = good.replace(signature, `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`);
    const n = 3 * cluster.balancer.webhookFailuresPerMinute;
    const statuses = await pool(2 * n, 8, async (i) => (await from('127.0.0.7', i % 2 ? bad : good)).status);
    expect(tally(statuses)).toEqual({ 200: n, 403: n });
  });
});
