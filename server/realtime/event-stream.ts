import type { IncomingMessage, ServerResponse } from 'node:http';
import { countRequest, sessionTokenOf } from '@/server/web/credentials';
import { isDraining, shutdownSignal } from '@/server/web/shutdown';
import { logger } from '@/server/logger';
import { liveSessionIds, resolveSession } from '@/server/services/auth';
import { STREAM_REFUSED_CODE, STREAM_SUPERSEDED } from '@/server/shared/live-events';
import { subscribeBusiness } from './listen';
import { notificationHub } from './notifications';
import { presenceHub } from './presence';
import { streamLimits } from './stream-meter';
import { CONNECTED_FRAME, errorFrame, type StreamEndCode } from './trpc-sse';

/**
 * The inbox's live events (`GET /api/trpc/inbox.events`), served by our web server
 * (server/cli/web-server.ts, in production and under `npm run dev` alike) straight on Node's HTTP
 * response instead of through Next.js and tRPC: each event is serialized once for all the streams of
 * its business and written to their sockets, which is what lets one process hold thousands of open
 * inboxes (`npm run bench:events`, docs/performance.md).
 *
 * It speaks the wire format of a tRPC subscription (server/realtime/trpc-sse.ts), so the browser's
 * tRPC client reads it as the `inbox.events` procedure. Whatever is not the plain case (no session,
 * a session that does not resolve, the rate limit, the database down, a draining process) is left
 * to the tRPC route, whose procedure answers it in its own words. The rules: a staff session,
 * counted once against the rate limit; ended with UNAUTHORIZED once the session is revoked, expires
 * or its staff member is deactivated (checked every SESSION_RECHECK_MS, one query per process for
 * all streams); ended with SERVICE_UNAVAILABLE (which the client retries) when the process drains
 * or what the client missed could not be read. Each frame is an event of the log with its id
 * (listen.ts): a client that reconnects sends the last id it received (the EventSource's
 * `Last-Event-ID` header, or tRPC's `lastEventId` in the input) and is replayed what it missed, or
 * told to refetch (a `refetch` frame) when that is past the bounds (backlog.ts).
 * Beside the events, without ids, go its business's `presence` frames (presence.ts): a snapshot first,
 * then each change, never naming the stream's own staff member.
 * The stream meter (server/realtime/stream-meter.ts) ends a session's oldest stream with CONFLICT
 * when it opens one past EVENT_STREAMS_PER_SESSION, and refuses a stream with TOO_MANY_REQUESTS
 * when its business holds EVENT_STREAMS_PER_BUSINESS already. A client that reads too slowly (a
 * write would leave more than EVENT_STREAM_MAX_UNSENT_KIB unsent) is cut off.
 */
export const EVENTS_PATH = '/api/trpc/inbox.events';
/** How often an open events stream checks that its session is still live. */
export const SESSION_RECHECK_MS = 5_000;
type Stream = {
  res: ServerResponse;
  sessionId: number;
  end: (code: StreamEndCode, message: string) => void;
};
const streams = new Set<Stream>();
let recheck: NodeJS.Timeout | null = null;

/** How long a stream waits for its process's first LISTEN (notifications.ts) before it is declined. */
const LISTEN_WAIT_MS = 5_000;

/** The promise's value, or false when it takes longer than `ms`. */
function withinMs(promise: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Serves the request if it is a plain live-events subscription; false leaves it to the tRPC route. */
export async function serveEventStream(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  if (isDraining()) return false;
  const headers = new Headers();
  for (const name of ['cookie', 'authorization']) {
    const value = req.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  const token = sessionTokenOf(new Request('http://localhost/', { headers }));
  if (!token) return false;
  try {
    const caller = await resolveSession(token.token, token.viaCookie);
    if (!caller || caller.kind !== 'session') return false;
    await countRequest(caller);
    // `connected` makes the inbox read its bell again: by then this process must hear every
    // notification written after that read (notifications.ts). Not LISTENing in time: the tRPC route
    // answers SERVICE_UNAVAILABLE and the client tries again.
    if (!(await withinMs(notificationHub().listening(), LISTEN_WAIT_MS))) return false;
    if (res.destroyed) return true; // the client went away meanwhile
    open(res, caller, lastEventIdOf(req));
    return true;
  } catch {
    return false; // rate limited, database down: the tRPC route answers it
  }
}

/**
 * The id of the last event the client received, where tRPC's server looks for it: the
 * `Last-Event-ID` header (an EventSource reconnecting by itself), else the query's `lastEventId`,
 * else the input's (`?input={"json":{"lastEventId":"…"}}`: tRPC's client opening the stream
 * again). Anything but a positive integer is an id the log does not have: the client refetches.
 */
export function lastEventIdOf(req: IncomingMessage): number | null {
  const url = new URL(req.url ?? '/', 'http://localhost');
  let raw: unknown = req.headers['last-event-id'] ?? url.searchParams.get('lastEventId') ?? url.searchParams.get('Last-Event-Id');
  if (raw === null || raw === undefined) {
    try {
      raw = (JSON.parse(url.searchParams.get('input') ?? 'null') as { json?: { lastEventId?: unknown } } | null)?.json
        ?.lastEventId;
    } catch {
      raw = undefined;
    }
  }
  if (raw === null || raw === undefined) return null;
  return /^\d{1,15}$/.test(String(raw)) ? Number(raw) : 0;
}

function open(
  res: ServerResponse,
  { businessId, sessionId, staffId }: { businessId: number; sessionId: number; staffId: number },
  lastEventId: number | null,
) {
  const { maxUnsentBytes } = streamLimits();
  let closed = false;
  const stream: Stream = {
    res,
    sessionId,
    end(code, message) {
      if (closed) return;
      res.end(errorFrame(code, message));
      cleanup();
    },
  };
  function send(bytes: Buffer) {
    if (closed) return;
    // Cut, not ended with a frame: a frame would wait behind the backlog, holding memory until the
    // client reads or goes. The browser's EventSource takes the dropped connection as a reason to
    // reconnect, and resumes after the last event it received (or refetches, past the bounds).
    if (res.writableLength + bytes.length > maxUnsentBytes) {
      cleanup();
      res.destroy();
      return;
    }
    res.write(bytes);
  }
  const subscription = subscribeBusiness({
    businessId,
    sessionId,
    lastEventId,
    push: (_event, _id, frame) => send(frame()),
    interrupt: () => stream.end('SERVICE_UNAVAILABLE', 'Live events were interrupted; reconnecting'),
    supersede: () => stream.end(STREAM_SUPERSEDED.code, STREAM_SUPERSEDED.message),
  });
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
    'X-Content-Type-Options': 'nosniff',
  });
  // Refused (its business is full): as a tRPC subscription ends, a `connected` frame and the error.
  if (!subscription.ok) {
    res.end(Buffer.concat([CONNECTED_FRAME, errorFrame(STREAM_REFUSED_CODE, subscription.message)]));
    return;
  }
  res.write(CONNECTED_FRAME);
  const { unsubscribe } = subscription;
  // Set once subscribed (below); a cut during the snapshot's own write finds nothing to leave yet.
  const presence = { leave: () => {} };
  const notifications = { leave: () => {} };
  const onShutdown = () => stream.end('SERVICE_UNAVAILABLE', 'This server is restarting; reconnecting');
  const shutdown = shutdownSignal();
  shutdown.addEventListener('abort', onShutdown, { once: true });
  function cleanup() {
    if (closed) return;
    closed = true;
    unsubscribe();
    presence.leave();
    notifications.leave();
    shutdown.removeEventListener('abort', onShutdown);
    streams.delete(stream);
    if (streams.size === 0 && recheck) {
      clearInterval(recheck);
      recheck = null;
    }
  }
  res.once('close', cleanup);
  streams.add(stream);
  recheck ??= setInterval(() => void recheckSessions(), SESSION_RECHECK_MS);
  // Presence frames go the same way (server/realtime/presence.ts): its business's, a snapshot first.
  presence.leave = presenceHub().subscribe({ businessId, staffId, push: send });
  if (closed)
    presence.leave(); // the snapshot alone was past the unsent cap
  // The staff member's own notifications (server/realtime/notifications.ts).
  else notifications.leave = notificationHub().subscribe({ businessId, staffId, push: send });
}

/** One query for every open stream's session; a stream whose session ended is ended with UNAUTHORIZED. */
async function recheckSessions() {
  // Only the streams open now: one opened while the query runs is not in its answer.
  const checked = [...streams];
  const ids = [...new Set(checked.map((s) => s.sessionId))];
  if (ids.length === 0) return;
  let live: Set<number>;
  try {
    live = await liveSessionIds(ids);
  } catch (err) {
    // A database hiccup is no reason to sign anyone out.
    logger.warn({ err: { message: (err as Error).message } }, 'event stream session re-check failed');
    return;
  }
  for (const s of checked) if (!live.has(s.sessionId)) s.end('UNAUTHORIZED', 'Signed out: this session has ended');
}

/** Open live event streams in this process (tests, diagnostics). */
export function openEventStreams(): number {
  return streams.size;
}
