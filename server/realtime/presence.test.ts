import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql } from '@/db/connect';
import { issueSession } from '@/server/services/auth';
import { announcePresence, beatPayload, parseBeat, PRESENCE_CHANNEL, type PresenceBeat } from '@/server/services/presence';
import type { PresenceFrame } from '@/server/shared/presence';
import { createClient, createConversation, createStaff, createTenant } from '@/server/testing/factories';
import { requestEventStream, sseParser } from '@/server/testing/sse';
import { staffCaller } from '@/server/testing/trpc';
import { EVENTS_PATH, serveEventStream } from './event-stream';
import { createPresenceHub, PresenceRegistry, type PresenceHub } from './presence';

/**
 * Presence (presence.ts): the registry with a fake clock (arrivals, "still here", typing, leaving,
 * expiry), what each stream is sent (its business only, never its own staff member), two web
 * processes' registries agreeing through the NOTIFY, and the whole path: a beat through tRPC reaching
 * a colleague's live stream.
 */

const beat = (over: Partial<PresenceBeat> = {}): PresenceBeat => ({
  businessId: 1,
  conversationId: 10,
  staffId: 100,
  state: 'viewing',
  ...over,
});

describe('the presence registry', () => {
  it('tells arrivals, typing and leaving from a mere "still here", and expires a silent staff member after the TTL', () => {
    let now = 1_000_000;
    const r = new PresenceRegistry(() => now, 30_000);
    expect(r.apply(beat())).toBe(true); // arrived
    now += 10_000;
    expect(r.apply(beat())).toBe(false); // still here: nothing to tell
    expect(r.apply(beat({ state: 'replying' }))).toBe(true);
    expect(r.on(1, 10)).toEqual([{ staffId: 100, state: 'replying' }]);
    expect(r.apply(beat({ state: 'replying' }))).toBe(false);
    // The last beat was at +10 s: still there just before +40 s, gone at +40 s.
    now += 29_999;
    expect(r.sweep()).toEqual([]);
    now += 1;
    expect(r.sweep()).toEqual([{ businessId: 1, conversationId: 10 }]);
    expect(r.on(1, 10)).toEqual([]);
    expect(r.size()).toBe(0);
    // Leaving is told at once; leaving again (or a conversation never joined) is nothing.
    r.apply(beat());
    expect(r.apply(beat({ state: 'left' }))).toBe(true);
    expect(r.apply(beat({ state: 'left' }))).toBe(false);
    expect(r.size()).toBe(0);
  });

  it('keeps businesses apart and leaves the viewer out of what they are shown', () => {
    const r = new PresenceRegistry(() => 0);
    r.apply(beat({ staffId: 100 }));
    r.apply(beat({ staffId: 101, state: 'noting' }));
    r.apply(beat({ staffId: 100, conversationId: 11 }));
    r.apply(beat({ businessId: 2, staffId: 200 }));
    expect(r.on(1, 10)).toEqual([
      { staffId: 100, state: 'viewing' },
      { staffId: 101, state: 'noting' },
    ]);
    expect(r.on(1, 10, 100)).toEqual([{ staffId: 101, state: 'noting' }]);
    expect(r.on(2, 10)).toEqual([{ staffId: 200, state: 'viewing' }]);
    // Staff 100's snapshot: only where someone else is.
    expect(r.snapshot(1, 100)).toEqual([{ conversationId: 10, staff: [{ staffId: 101, state: 'noting' }] }]);
    expect(r.snapshot(1, 999).map((c) => c.conversationId)).toEqual([10, 11]);
    expect(r.snapshot(3, 999)).toEqual([]);
  });

  it('reads back only the beats it wrote', () => {
    expect(parseBeat(beatPayload(beat({ state: 'noting' })))).toEqual(beat({ state: 'noting' }));
    for (const bad of ['', '1,2,3', '1,2,3,typing', '1,2,0,viewing', '1,2,x,viewing', '1,2,3,viewing,4', '-1,2,3,left'])
      expect(parseBeat(bad)).toBeNull();
  });
});

/** A stream's side of a hub: the frames it was pushed, parsed. */
function follow(hub: PresenceHub, businessId: number, staffId: number) {
  const frames: PresenceFrame[] = [];
  const stop = hub.subscribe({
    businessId,
    staffId,
    push: (bytes) => frames.push((JSON.parse(bytes.toString().slice('data: '.length)) as { json: PresenceFrame }).json),
  });
  return { frames, stop };
}

describe('presence frames', () => {
  it('go to the streams of the business only, never naming their own staff member, from a snapshot on', async () => {
    let now = 0;
    let notify!: (payload: string) => void;
    const hub = createPresenceHub({ listen: (n) => (notify = n), now: () => now, ttlMs: 30_000, sweepMs: 5 });
    try {
      notify(beatPayload(beat({ staffId: 101 })));
      const ana = follow(hub, 1, 100);
      const ben = follow(hub, 1, 101);
      const other = follow(hub, 2, 200);
      expect(ana.frames).toEqual([
        {
          type: 'presence',
          businessId: 1,
          snapshot: true,
          conversations: [{ conversationId: 10, staff: [{ staffId: 101, state: 'viewing' }] }],
        },
      ]);
      expect(ben.frames).toEqual([{ type: 'presence', businessId: 1, snapshot: true, conversations: [] }]);
      // Ana opens the conversation and types: Ben sees both, Ana is not told of herself.
      notify(beatPayload(beat({ staffId: 100 })));
      notify(beatPayload(beat({ staffId: 100, state: 'replying' })));
      notify(beatPayload(beat({ staffId: 100, state: 'replying' }))); // still typing: nothing new
      expect(ana.frames).toHaveLength(1);
      expect(ben.frames.slice(1)).toEqual([
        {
          type: 'presence',
          businessId: 1,
          snapshot: false,
          conversations: [{ conversationId: 10, staff: [{ staffId: 100, state: 'viewing' }] }],
        },
        {
          type: 'presence',
          businessId: 1,
          snapshot: false,
          conversations: [{ conversationId: 10, staff: [{ staffId: 100, state: 'replying' }] }],
        },
      ]);
      // Ben's beats stop: at the TTL, Ana sees him go; Ben is shown Ana still there.
      now = 30_000;
      notify(beatPayload(beat({ staffId: 100, state: 'viewing' })));
      await new Promise((r) => setTimeout(r, 50));
      expect(ana.frames.slice(1)).toEqual([
        { type: 'presence', businessId: 1, snapshot: false, conversations: [{ conversationId: 10, staff: [] }] },
      ]);
      expect(ben.frames.at(-1)).toEqual({
        type: 'presence',
        businessId: 1,
        snapshot: false,
        conversations: [{ conversationId: 10, staff: [{ staffId: 100, state: 'viewing' }] }],
      });
      // Another business's stream saw nothing but its own (empty) snapshot.
      expect(other.frames).toEqual([{ type: 'presence', businessId: 2, snapshot: true, conversations: [] }]);
      ana.stop();
      notify(beatPayload(beat({ staffId: 102 })));
      expect(ana.frames).toHaveLength(2);
    } finally {
      hub.stop();
    }
  });

  it('two web processes, each LISTENing on its own connection, agree on who is where', async () => {
    const t = await createTenant();
    const conversation = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const connections = [createSql(process.env.DATABASE_URL!, { max: 1 }), createSql(process.env.DATABASE_URL!, { max: 1 })];
    const hubs = await Promise.all(
      connections.map(
        (sql) =>
          new Promise<PresenceHub>((resolve) => {
            const hub: PresenceHub = createPresenceHub({
              listen: (onNotify) => void sql.listen(PRESENCE_CHANNEL, onNotify, () => resolve(hub)),
            });
          }),
      ),
    );
    try {
      const streams = hubs.map((hub) => follow(hub, t.business.id, 999_999));
      await announcePresence({
        businessId: t.business.id,
        conversationId: conversation.id,
        staffId: t.owner.id,
        state: 'noting',
      });
      const seen = { conversationId: conversation.id, staff: [{ staffId: t.owner.id, state: 'noting' }] };
      await expect.poll(() => streams.map((s) => s.frames.at(-1)?.conversations)).toEqual([[seen], [seen]]);
      expect(hubs.map((h) => h.registry.on(t.business.id, conversation.id))).toEqual([seen.staff, seen.staff]);
      await announcePresence({ businessId: t.business.id, conversationId: conversation.id, staffId: t.owner.id, state: 'left' });
      await expect.poll(() => hubs.map((h) => h.registry.size())).toEqual([0, 0]);
    } finally {
      for (const h of hubs) h.stop();
      await Promise.all(connections.map((c) => c.end()));
    }
  });
});

describe('presence over the live stream', () => {
  let server: http.Server;
  let base: URL;
  beforeAll(async () => {
    server = http.createServer((req, res) => void serveEventStream(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = new URL(EVENTS_PATH, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  afterAll(
    () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  );

  /** A staff member's stream: the presence frames it received. */
  function openStream(sessionToken: string) {
    const frames: PresenceFrame[] = [];
    const req = requestEventStream(base, sessionToken, {}, (res) => {
      res.setEncoding('utf8');
      res.on(
        'data',
        sseParser((event, data, id) => {
          const value = event === 'message' ? (JSON.parse(data) as { json: { type: string } }).json : null;
          if (value?.type !== 'presence') return;
          expect(id).toBeUndefined(); // not an event of the log: no id to resume after
          frames.push(value as PresenceFrame);
        }),
      );
    });
    req.end();
    return { frames, close: () => req.destroy() };
  }

  it('a beat through tRPC reaches a colleague’s stream (not the beater’s, not another business’s)', async () => {
    const t = await createTenant();
    const ben = await createStaff(t.business.id, { name: 'Ben Ito' });
    const benSession = await issueSession({ kind: 'platform', scope: 'test' }, { business_id: t.business.id, staff_id: ben.id });
    const stranger = await createTenant();
    const conversation = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const anaStream = openStream(t.sessionToken);
    const benStream = openStream(benSession.token);
    const strangerStream = openStream(stranger.sessionToken);
    try {
      await expect.poll(() => [anaStream, benStream, strangerStream].map((s) => s.frames.length)).toEqual([1, 1, 1]);
      const ana = await staffCaller(t.sessionToken);
      await ana.presence.beat({ conversationId: conversation.id, state: 'replying' });
      await expect
        .poll(() => benStream.frames.at(-1))
        .toEqual({
          type: 'presence',
          businessId: t.business.id,
          snapshot: false,
          conversations: [{ conversationId: conversation.id, staff: [{ staffId: t.owner.id, state: 'replying' }] }],
        });
      await ana.presence.beat({ conversationId: conversation.id, state: 'left' });
      await expect.poll(() => benStream.frames.at(-1)?.conversations).toEqual([{ conversationId: conversation.id, staff: [] }]);
      expect(anaStream.frames).toHaveLength(1);
      expect(strangerStream.frames).toHaveLength(1);
    } finally {
      for (const s of [anaStream, benStream, strangerStream]) s.close();
    }
  });
});
