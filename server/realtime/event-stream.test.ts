import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { sessions, staff } from '@/db/schema';
import { issueSession } from '@/server/services/auth';
import { createClient, createConversation, createTenant } from '@/server/testing/factories';
import { requestEventStream, sseParser } from '@/server/testing/sse';
import { EVENTS_PATH, openEventStreams, serveEventStream } from './event-stream';
import { logWakeUps } from '@/server/testing/log-events';
import { RESUME_MAX_EVENTS } from './backlog';
import { streamMeter } from './stream-meter';
import { CONNECTED_FRAME, eventFrame, presenceFrame } from './trpc-sse';
import { sql } from 'drizzle-orm';
import { NOTIFICATIONS_CHANNEL } from '@/server/services/notifications/handler';
import { listenOn } from './listen';
import { createNotificationHub, type NotificationHub } from './notifications';

// Read on first use of the configuration: a business cap small enough to reach (default 200).
process.env.EVENT_STREAMS_PER_BUSINESS = '8';

/**
 * The live event stream the web server serves (in production and development): tRPC subscription
 * frames (trpc-sse.ts, checked byte for byte against tRPC's own in trpc-sse.test.ts), the events of
 * the session's business only, each with its id in the log, replayed after the id a reconnecting
 * client sends (or a `refetch` past the bounds), ended with the retryable or final errors the client
 * reads, and held to the stream meter (stream-meter.ts).
 */
let server: http.Server;
let base: string;
/** What this server answered: each response, the request's `x-test` header, and the most it ever had unsent. */
const served: { res: http.ServerResponse; name: string; peakUnsent: number }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const entry = { res, name: String(req.headers['x-test'] ?? ''), peakUnsent: 0 };
    served.push(entry);
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    res.write = ((...args: unknown[]) => {
      const ok = write(...args);
      entry.peakUnsent = Math.max(entry.peakUnsent, res.writableLength);
      return ok;
    }) as typeof res.write;
    void serveEventStream(req, res).then((served) => {
      if (!served) res.writeHead(404).end('left to the tRPC route');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(
  () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections(); // streams a failed test left open
    }),
);

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

/** A stream's first presence frame when nobody else is on any conversation of its business. */
const snapshotOf = (businessId: number) => presenceFrame({ type: 'presence', businessId, snapshot: true, conversations: [] });

describe('live event stream', () => {
  it('writes tRPC subscription frames (trpc-sse.ts): connected, the presence snapshot, then each event of the business with its id', async () => {
    const t = await createTenant();
    const res = await fetch(`${base}${EVENTS_PATH}`, { headers: { cookie: `session=${t.sessionToken}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    // Nobody else is on any conversation of the business (presence.test.ts has the rest of presence).
    expect(await readUntil(res.body!, (x) => x.split('\n\n\n').length > 2)).toBe(
      CONNECTED_FRAME.toString() + snapshotOf(t.business.id).toString(),
    );
    const [id] = await logWakeUps(t.business.id, [3]);
    const event = { type: 'conversation.updated' as const, businessId: t.business.id, conversationIds: [3] };
    expect(await readUntil(res.body!, (x) => x.includes('\n\n\n'))).toBe(eventFrame(event, id!).toString());
    await res.body!.cancel();
  });

  it('a client that reconnects with its last event id gets what it missed, then what follows, each once and in order', async () => {
    const t = await createTenant();
    const [first, ...missed] = await logWakeUps(t.business.id, [1, 2, 3, 4]);
    await logWakeUps((await createTenant()).business.id, [9]); // another business's, in between
    // The EventSource's own reconnect sends the header; tRPC's client, opening the stream again, the input.
    for (const how of ['header', 'input'] as const) {
      const url =
        how === 'header'
          ? `${base}${EVENTS_PATH}`
          : `${base}${EVENTS_PATH}?input=${encodeURIComponent(JSON.stringify({ json: { lastEventId: String(first) } }))}`;
      const headers: Record<string, string> = { cookie: `session=${t.sessionToken}` };
      if (how === 'header') headers['last-event-id'] = String(first);
      const res = await fetch(url, { headers });
      const replayed = await readUntil(res.body!, (x) => idsOf(x).length >= missed.length);
      expect(idsOf(replayed)).toEqual(missed);
      const [later] = await logWakeUps(t.business.id, [5]);
      const text = replayed + (await readUntil(res.body!, (x) => x.includes(`id: ${later}\n`)));
      expect(idsOf(text)).toEqual([...missed, later]);
      missed.push(later!); // the next client, resuming after `first` too, missed it as well
      await res.body!.cancel();
    }
  });

  it('tells a client to refetch when its last event is unknown, another business’s, or followed by too many', async () => {
    const t = await createTenant();
    const other = await createTenant();
    // A stream of the business open while the events are logged. The tail reads only below the
    // oldest transaction running on the server (any database's: other test files' too), so on a busy
    // machine it can lag; once this stream shows the latest event, the tail is past it and every
    // stream below joins after it, and so names it in its refetch frame.
    const watcher = await fetch(`${base}${EVENTS_PATH}`, { headers: { cookie: `session=${t.sessionToken}` } });
    await readUntil(watcher.body!, (x) => x.split('\n\n\n').length > 2); // connected, the presence snapshot
    const [theirs] = await logWakeUps(other.business.id, [1]);
    const ids = await logWakeUps(
      t.business.id,
      Array.from({ length: RESUME_MAX_EVENTS + 2 }, (_, i) => i + 1),
    );
    const latest = ids.at(-1)!;
    await readUntil(watcher.body!, (x) => x.includes(`id: ${latest}\n`), 60_000);
    await watcher.body!.cancel();
    for (const lastEventId of ['999999999999', String(theirs), 'not-an-id', String(ids[0])]) {
      const res = await fetch(`${base}${EVENTS_PATH}`, {
        headers: { cookie: `session=${t.sessionToken}`, 'last-event-id': lastEventId },
      });
      const text = await readUntil(res.body!, (x) => x.includes('refetch') && x.endsWith('\n\n\n'));
      // One frame: refetch, with the business's latest event to resume after; nothing replayed.
      expect(text.slice(CONNECTED_FRAME.length + snapshotOf(t.business.id).length)).toBe(
        eventFrame({ type: 'refetch', businessId: t.business.id, conversationIds: [] }, latest).toString(),
      );
      await res.body!.cancel();
    }
    // Within the bound, the same business replays.
    const res = await fetch(`${base}${EVENTS_PATH}`, {
      headers: { cookie: `session=${t.sessionToken}`, 'last-event-id': String(ids.at(-RESUME_MAX_EVENTS - 1)) },
    });
    const text = await readUntil(res.body!, (x) => idsOf(x).length === RESUME_MAX_EVENTS);
    expect(idsOf(text)).toEqual(ids.slice(-RESUME_MAX_EVENTS));
    await res.body!.cancel();
  }, 90_000);

  it('says `connected` only once its process LISTENs for notifications, and then hears one written at once', async () => {
    // `connected` makes the inbox read its bell again; a notification written between that read
    // and the LISTEN would reach neither. Here the process's first LISTEN is held back.
    const processHub = globalThis as unknown as { __notifications?: NotificationHub };
    const before = processHub.__notifications;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    processHub.__notifications = createNotificationHub(async (onNotify) => {
      await released;
      return listenOn(NOTIFICATIONS_CHANNEL, onNotify, () => {});
    });
    try {
      const t = await createTenant();
      let answered = false;
      const opening = fetch(`${base}${EVENTS_PATH}`, { headers: { cookie: `session=${t.sessionToken}` } }).then((res) => {
        answered = true;
        return res;
      });
      await new Promise((r) => setTimeout(r, 500));
      expect(answered).toBe(false);
      release();
      const res = await opening;
      expect(res.status).toBe(200);
      await readUntil(res.body!, (x) => x.includes('connected'));
      const notification = { id: 987_654, kind: 'new_conversation' };
      await db.execute(
        sql`select pg_notify(${NOTIFICATIONS_CHANNEL}, ${JSON.stringify({ businessId: t.business.id, staffId: t.owner.id, notification })})`,
      );
      const text = await readUntil(res.body!, (x) => x.includes('987654'));
      expect(text).toContain('"type":"notification"');
      await res.body!.cancel();
    } finally {
      processHub.__notifications = before;
    }
  });

  it('declines a stream (the tRPC route answers it, retryably) while its process cannot LISTEN, and LISTENs on the next', async () => {
    const processHub = globalThis as unknown as { __notifications?: NotificationHub };
    const before = processHub.__notifications;
    let tries = 0;
    processHub.__notifications = createNotificationHub(async () => ++tries > 1);
    try {
      const t = await createTenant();
      const refused = await fetch(`${base}${EVENTS_PATH}`, { headers: { cookie: `session=${t.sessionToken}` } });
      expect(refused.status).toBe(404); // this file's server: "left to the tRPC route"
      const res = await fetch(`${base}${EVENTS_PATH}`, { headers: { cookie: `session=${t.sessionToken}` } });
      expect(res.status).toBe(200);
      expect(tries).toBe(2);
      await res.body!.cancel();
    } finally {
      processHub.__notifications = before;
    }
  });

  it('a change made by another process reaches the stream', async () => {
    const t = await createTenant();
    const conv = await createConversation(t.business.id, (await createClient(t.business.id)).id);
    const res = await fetch(`${base}${EVENTS_PATH}`, { headers: { cookie: `session=${t.sessionToken}` } });
    await readUntil(res.body!, (x) => x.includes('connected'));
    await new Promise<void>((resolve, reject) => {
      const args = ['e2e/cli/add-note-cli.ts', String(t.business.id), String(conv.id), 'from another process'];
      const child = spawn('node_modules/.bin/tsx', args, { env: process.env, stdio: 'inherit' });
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`child exited ${code}`))));
    });
    const text = await readUntil(res.body!, (x) => x.includes('message.created'));
    expect(text).toContain(`"conversationIds":[${conv.id}]`);
    await res.body!.cancel();
  });

  it('another business gets nothing; a revoked session ends the stream with UNAUTHORIZED', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const res = await fetch(`${base}${EVENTS_PATH}`, { headers: { cookie: `session=${a.sessionToken}` } });
    await readUntil(res.body!, (x) => x.includes('connected'));
    await logWakeUps(b.business.id, [1]);
    await logWakeUps(a.business.id, [2]);
    const mine = await readUntil(res.body!, (x) => x.includes('\n\n\n'));
    expect(mine).toContain(`"businessId":${a.business.id}`);
    expect(mine).not.toContain(`"businessId":${b.business.id}`);

    await db.update(sessions).set({ revokedAt: new Date() }).where(eq(sessions.businessId, a.business.id));
    const ended = await readUntil(res.body!, endedWithError, 15_000);
    expect(errorOf(ended)).toMatchObject({ data: { code: 'UNAUTHORIZED' } });
    const data = JSON.parse(ended.split('data: ').pop()!.trim()) as {
      json: { code: number; data: { code: string; httpStatus: number } };
    };
    expect(data.json.data).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });
    expect(data.json.code).toBe(-32001);
  }, 30_000);

  it('a stream ends with UNAUTHORIZED once its staff member is deactivated', async () => {
    const t = await createTenant();
    const res = await fetch(`${base}${EVENTS_PATH}`, { headers: { cookie: `session=${t.sessionToken}` } });
    await readUntil(res.body!, (x) => x.includes('connected'));
    await db.update(staff).set({ active: false }).where(eq(staff.id, t.owner.id));
    expect(errorOf(await readUntil(res.body!, endedWithError, 15_000))).toMatchObject({
      message: 'Signed out: this session has ended',
      data: { code: 'UNAUTHORIZED', httpStatus: 401 },
    });
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

  it('the sixth stream of a session ends its oldest with CONFLICT, which the client does not retry; the others stay', async () => {
    const t = await createTenant();
    const open = await openStreams(t.sessionToken, 6);
    const oldest = await readUntil(open[0]!.body!, endedWithError);
    expect(errorOf(oldest)).toEqual({
      code: -32009,
      message: 'Opened in another tab: this session has the most live streams it may hold open',
      data: { code: 'CONFLICT', httpStatus: 409, path: 'inbox.events' },
    });
    // The other five still get events.
    await logWakeUps(t.business.id, [5]);
    for (const res of open.slice(1))
      expect(await readUntil(res.body!, (x) => x.includes('\n\n\n'))).toContain('"conversationIds":[5]');
    for (const res of open) await res.body!.cancel();
  });

  it('refuses a new stream with TOO_MANY_REQUESTS once its business holds EVENT_STREAMS_PER_BUSINESS (8)', async () => {
    const t = await createTenant();
    const tokenOf = async () =>
      (await issueSession({ kind: 'platform', scope: 'test' }, { business_id: t.business.id, staff_id: t.owner.id })).token;
    const [second, third] = [await tokenOf(), await tokenOf()];
    const open = [...(await openStreams(t.sessionToken, 5)), ...(await openStreams(second, 3))];

    const refused = await fetch(`${base}${EVENTS_PATH}`, { headers: { cookie: `session=${third}` } });
    expect(refused.status).toBe(200); // as the tRPC route answers it: connected, then the error, then the end
    const text = await refused.text();
    expect(text.startsWith('event: connected\n')).toBe(true);
    expect(errorOf(text)).toMatchObject({
      code: -32029,
      message: expect.stringContaining('EVENT_STREAMS_PER_BUSINESS=8'),
      data: { code: 'TOO_MANY_REQUESTS', httpStatus: 429 },
    });
    expect(streamMeter().count({ businessId: t.business.id })).toBe(8);

    // A session at its own cap still opens a new tab: it takes its oldest's place.
    open.push(...(await openStreams(t.sessionToken, 1)));
    expect(errorOf(await readUntil(open[0]!.body!, endedWithError))).toMatchObject({
      data: { code: 'CONFLICT' },
    });
    // Once a stream closes, there is room again.
    await open[5]!.body!.cancel();
    for (let i = 0; i < 50 && streamMeter().count({ businessId: t.business.id }) > 7; i++)
      await new Promise((r) => setTimeout(r, 50));
    const admitted = await openStreams(third, 1);
    expect(streamMeter().count({ businessId: t.business.id })).toBe(8);
    for (const res of [...open.slice(1), ...admitted]) await res.body!.cancel().catch(() => {});
  });

  it('cuts a reader that would have more than 256 KiB unsent; the business’s other streams go on', async () => {
    const t = await createTenant();
    const reading = (await openStreams(t.sessionToken, 1))[0]!;
    let readBytes = 0;
    const reader = reading.body!.getReader();
    void (async () => {
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) return;
        readBytes += value!.length;
      }
    })();
    // A client that never reads what it is sent.
    let slowStatus = 0;
    const slow = requestEventStream(new URL(`${base}${EVENTS_PATH}`), t.sessionToken, { 'x-test': 'slow' }, (res) => {
      slowStatus = res.statusCode ?? 0;
      res.pause();
    });
    slow.on('error', () => {});
    slow.end();
    for (let i = 0; i < 100 && !served.some((s) => s.name === 'slow' && s.res.headersSent); i++)
      await new Promise((r) => setTimeout(r, 50));
    const entry = served.find((s) => s.name === 'slow')!;
    const before = streamMeter().count({ businessId: t.business.id });
    expect(before).toBe(2);

    // Thousands of events a transaction: past what the kernel's socket buffers take, the rest waits in the process.
    for (let batch = 0; batch < 400 && !entry.res.destroyed; batch++) {
      await logWakeUps(
        t.business.id,
        Array.from({ length: 2_000 }, (_, i) => 1_000_000_000 + i),
      );
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(slowStatus).toBe(200);
    expect(entry.res.destroyed).toBe(true);
    expect(entry.peakUnsent).toBeLessThanOrEqual(256 * 1024);
    expect(entry.peakUnsent).toBeGreaterThan(128 * 1024); // it did fall behind, up to about the limit
    expect(streamMeter().count({ businessId: t.business.id })).toBe(1);
    // The reader that keeps up is still open and still fed.
    const got = readBytes;
    await logWakeUps(t.business.id, [9]);
    for (let i = 0; i < 100 && readBytes === got; i++) await new Promise((r) => setTimeout(r, 50));
    expect(readBytes).toBeGreaterThan(got);
    slow.destroy();
    await reader.cancel();
  }, 120_000);
});

/** The event ids of the frames in the text of a stream, in order. */
const idsOf = (text: string) => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));

/** Until a whole `serialized-error` frame is read (tRPC writes a frame's lines as separate chunks). */
const endedWithError = (text: string) => text.includes('serialized-error') && text.endsWith('\n\n\n');

/** Opens `n` fast-path streams of one session, one after the other (each connected before the next). */
async function openStreams(token: string, n: number): Promise<Response[]> {
  const open: Response[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${base}${EVENTS_PATH}`, { headers: { cookie: `session=${token}` } });
    expect(res.status).toBe(200);
    expect(await readUntil(res.body!, (x) => x.includes('connected'))).not.toContain('serialized-error');
    open.push(res);
  }
  return open;
}

/** The error shape a `serialized-error` frame carries, from the text of a stream. */
function errorOf(text: string): unknown {
  let shape: unknown;
  sseParser((event, data) => {
    if (event === 'serialized-error') shape = (JSON.parse(data) as { json: unknown }).json;
  })(text);
  return shape;
}
