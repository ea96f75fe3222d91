import net from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/db/client';
import { messages } from '@/db/schema';
import { ensureProductionBuild } from '@/server/cli/production-build';
import { parseEnv } from '@/server/env';
import { TWILIO_WEBHOOK_PATHS, twilioSid, twilioWebhookRequest } from '@/server/providers/webhook-requests';
import { createSmsNumber, createTenant } from '@/server/testing/factories';
import { startCluster, type Cluster } from './cluster';

/**
 * Two web processes and a worker behind HAProxy, on the production build in .next-e2e (rebuilt
 * first when older than the sources) and this file's own database, exactly as an operator runs
 * `npm run deploy:local`; everything below goes through the balancer.
 */
const DIST_DIR = '.next-e2e';
let cluster: Cluster;

beforeAll(async () => {
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

describe('local deployment behind HAProxy', () => {
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
