import { describe, expect, it } from 'vitest';
import { db } from '@/db/client';
import { publish, type InboxEvent } from '@/server/realtime/publish';
import { streamMeter } from '@/server/realtime/stream-meter';
import { issueSession } from '@/server/services/auth';
import { createTenant } from '@/server/testing/factories';
import { createContext } from './init';
import { createCaller } from './root';

// Read on first use of the configuration: a business cap small enough to reach (default 200).
process.env.EVENT_STREAMS_PER_BUSINESS = '7';

/**
 * The tRPC procedure `inbox.events` (the live events stream under `next dev` and wherever the
 * production fast path passes) is held to the stream meter it shares with the fast path
 * (server/realtime/stream-meter.ts; the fast path's side is in event-stream.test.ts): a session's
 * sixth stream ends its oldest with CONFLICT, a full business refuses with TOO_MANY_REQUESTS, and a
 * reader more than 256 KiB behind ends with SERVICE_UNAVAILABLE (the client reconnects and refetches).
 */
async function callerFor(token: string, signal?: AbortSignal) {
  const req = new Request('http://localhost:3000/api/trpc/inbox.events', {
    headers: { host: 'localhost:3000', cookie: `session=${token}` },
  });
  return createCaller(await createContext({ req }), { signal });
}

type Followed = { events: InboxEvent[]; outcome: Promise<string>; stop: () => void };

/** Opens a stream and reads it in the background: its events, and how it ended (a tRPC code, or 'stopped'). */
async function follow(token: string): Promise<Followed> {
  const controller = new AbortController();
  const iterable = (await (await callerFor(token, controller.signal)).inbox.events()) as AsyncIterable<InboxEvent>;
  const events: InboxEvent[] = [];
  const outcome = (async () => {
    for await (const event of iterable) events.push(event);
    return 'stopped';
  })().catch((err: { code?: string }) => err.code ?? String(err));
  // The generator subscribes (is metered) when first read; give it that turn, and the LISTEN time.
  await new Promise((r) => setTimeout(r, 100));
  return { events, outcome, stop: () => controller.abort() };
}

const settled = (p: Promise<string>, ms = 1_000) =>
  Promise.race([p, new Promise<string>((r) => setTimeout(() => r('still open'), ms))]);

const anotherSession = async (t: Awaited<ReturnType<typeof createTenant>>) =>
  (await issueSession({ kind: 'platform', scope: 'test' }, { business_id: t.business.id, staff_id: t.owner.id })).token;

describe('inbox.events and the stream meter', () => {
  it('the sixth stream of a session ends its oldest with CONFLICT; the other five go on', async () => {
    const t = await createTenant();
    const streams: Followed[] = [];
    for (let i = 0; i < 6; i++) streams.push(await follow(t.sessionToken));
    expect(await settled(streams[0]!.outcome)).toBe('CONFLICT');
    await publish(db, { type: 'conversation.updated', businessId: t.business.id, conversationIds: [4] });
    for (let i = 0; i < 50 && streams.slice(1).some((s) => s.events.length === 0); i++)
      await new Promise((r) => setTimeout(r, 50));
    for (const s of streams.slice(1)) {
      expect(s.events).toEqual([{ type: 'conversation.updated', businessId: t.business.id, conversationIds: [4] }]);
      expect(await settled(s.outcome, 10)).toBe('still open');
    }
    for (const s of streams) s.stop();
    await publish(db, { type: 'conversation.updated', businessId: t.business.id, conversationIds: [5] }); // wakes them to end
  });

  it('refuses a stream with TOO_MANY_REQUESTS while its business holds EVENT_STREAMS_PER_BUSINESS (7)', async () => {
    const t = await createTenant();
    const other = await anotherSession(t);
    const open: Followed[] = [];
    for (let i = 0; i < 5; i++) open.push(await follow(t.sessionToken));
    open.push(await follow(other), await follow(other));
    const refused = await follow(other);
    expect(await settled(refused.outcome)).toBe('TOO_MANY_REQUESTS');
    expect(streamMeter().count({ businessId: t.business.id })).toBe(7);
    // One closes: there is room again.
    open[0]!.stop();
    await publish(db, { type: 'conversation.updated', businessId: t.business.id, conversationIds: [1] });
    expect(await settled(open[0]!.outcome)).toBe('stopped');
    const admitted = await follow(other);
    expect(await settled(admitted.outcome, 300)).toBe('still open');
    expect(streamMeter().count({ businessId: t.business.id })).toBe(7);
    for (const s of [...open, admitted]) s.stop();
    await publish(db, { type: 'conversation.updated', businessId: t.business.id, conversationIds: [2] });
  });

  it('ends a reader more than 256 KiB behind with SERVICE_UNAVAILABLE', async () => {
    const t = await createTenant();
    const controller = new AbortController();
    const iterable = (await (await callerFor(t.sessionToken, controller.signal)).inbox.events()) as AsyncIterable<InboxEvent>;
    const stream = iterable[Symbol.asyncIterator]();
    const first = stream.next();
    await new Promise((r) => setTimeout(r, 300));
    await publish(db, { type: 'conversation.updated', businessId: t.business.id, conversationIds: [1] });
    await first;
    // ~2.6 KB each, 120 of them: over 300 KiB, none taken.
    await db.transaction(async (tx) => {
      for (let k = 0; k < 120; k++)
        await publish(tx, {
          type: 'conversation.updated',
          businessId: t.business.id,
          conversationIds: Array.from({ length: 150 }, (_, i) => 1_000_000_000_000_000 + k * 1000 + i),
        });
    });
    await new Promise((r) => setTimeout(r, 500));
    await expect(stream.next()).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: 'Too far behind; reconnect and refetch',
    });
    controller.abort();
  });
});
