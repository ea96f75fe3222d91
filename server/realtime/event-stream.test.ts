import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GET } from '@/app/api/trpc/[trpc]/route';
import { db } from '@/db/client';
import { sessions } from '@/db/schema';
import { createTenant } from '@/server/testing/factories';
import { EVENTS_PATH, openEventStreams, serveEventStream } from './event-stream';
import { publish } from './publish';

/**
 * The production fast path for live events speaks the tRPC subscription's wire format exactly:
 * the same `connected` frame and the same event frames as the tRPC route, byte for byte, so the
 * browser's tRPC client cannot tell them apart; it ends with the same retryable or final errors.
 */
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    void serveEventStream(req, res).then((served) => {
      if (!served) res.writeHead(404).end('left to the tRPC route');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** Reads an SSE body into text until `until(text)` holds. */
async function readUntil(body: ReadableStream<Uint8Array>, until: (text: string) => boolean, ms = 10_000): Promise<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + ms;
  while (!until(text)) {
    if (Date.now() > deadline) throw new Error(`stream did not show what was expected; got: ${JSON.stringify(text)}`);
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  return text;
}

const frames = (text: string) => text.split('\n\n\n').filter(Boolean);

describe('live events fast path', () => {
  it('writes the same frames as the tRPC route: connected, then each event of the business', async () => {
    const t = await createTenant();
    const cookie = `session=${t.sessionToken}`;
    const fast = await fetch(`${base}${EVENTS_PATH}`, { headers: { cookie } });
    expect(fast.status).toBe(200);
    expect(fast.headers.get('content-type')).toBe('text/event-stream');
    const trpc = await GET(new Request(`http://localhost:3000${EVENTS_PATH}`, { headers: { host: 'localhost:3000', cookie } }));
    expect(trpc.status).toBe(200);

    const fastConnected = await readUntil(fast.body!, (x) => x.includes('\n\n\n'));
    const trpcConnected = await readUntil(trpc.body!, (x) => x.includes('\n\n\n'));
    expect(fastConnected).toBe(trpcConnected);

    await new Promise((r) => setTimeout(r, 300)); // both subscribed on the LISTEN hub
    const event = { type: 'message.status' as const, businessId: t.business.id, conversationIds: [3, 4], messageIds: [10, 11] };
    await publish(db, event);
    const fastEvent = await readUntil(fast.body!, (x) => x.includes('\n\n\n'));
    const trpcEvent = await readUntil(trpc.body!, (x) => x.includes('\n\n\n'));
    expect(fastEvent).toBe(trpcEvent);
    expect(frames(fastEvent)[0]).toBe(`data: ${JSON.stringify({ json: event })}`);
    await fast.body!.cancel();
    await trpc.body!.cancel();
  });

  it('another business gets nothing; a revoked session ends the stream with UNAUTHORIZED', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const res = await fetch(`${base}${EVENTS_PATH}`, { headers: { cookie: `session=${a.sessionToken}` } });
    await readUntil(res.body!, (x) => x.includes('connected'));
    await new Promise((r) => setTimeout(r, 300));
    await publish(db, { type: 'conversation.updated', businessId: b.business.id, conversationIds: [1] });
    await publish(db, { type: 'conversation.updated', businessId: a.business.id, conversationIds: [2] });
    const mine = await readUntil(res.body!, (x) => x.includes('\n\n\n'));
    expect(mine).toContain(`"businessId":${a.business.id}`);
    expect(mine).not.toContain(`"businessId":${b.business.id}`);

    await db.update(sessions).set({ revokedAt: new Date() }).where(eq(sessions.businessId, a.business.id));
    const ended = await readUntil(res.body!, (x) => x.includes('serialized-error'), 15_000);
    const data = JSON.parse(ended.split('data: ').pop()!.trim()) as {
      json: { code: number; data: { code: string; httpStatus: number } };
    };
    expect(data.json.data).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });
    expect(data.json.code).toBe(-32001);
  }, 30_000);

  it('leaves anything but a plain subscription to the tRPC route (no session, unknown session)', async () => {
    expect((await fetch(`${base}${EVENTS_PATH}`)).status).toBe(404);
    expect((await fetch(`${base}${EVENTS_PATH}`, { headers: { cookie: 'session=not-a-session' } })).status).toBe(404);
  });

  it('forgets a stream once its client goes away', async () => {
    const t = await createTenant();
    const before = openEventStreams();
    const controller = new AbortController();
    const res = await fetch(`${base}${EVENTS_PATH}`, {
      headers: { cookie: `session=${t.sessionToken}` },
      signal: controller.signal,
    });
    await readUntil(res.body!, (x) => x.includes('connected'));
    expect(openEventStreams()).toBe(before + 1);
    controller.abort();
    for (let i = 0; i < 50 && openEventStreams() > before; i++) await new Promise((r) => setTimeout(r, 50));
    expect(openEventStreams()).toBe(before);
  });
});
