import type { IncomingMessage, ServerResponse } from 'node:http';
import { TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import { countRequest, sessionTokenOf } from '@/server/http/credentials';
import { isDraining, shutdownSignal } from '@/server/http/shutdown';
import { logger } from '@/server/logger';
import { liveSessionIds, resolveSession } from '@/server/services/auth';
import { subscribeBusiness } from './listen';

/**
 * The inbox's live events, served by the production web server (server/cli/web-server.ts) straight
 * on Node's HTTP response instead of through Next.js and tRPC: each event is serialized once for
 * all the streams of its business and written to their sockets, which is what lets one process hold
 * thousands of open inboxes (`npm run bench:events`). Through tRPC every delivery cost about half a
 * millisecond of CPU (its SSE generator, web streams, Next's response writer, and the garbage they
 * make), so a few thousand deliveries a second saturated a core and stalled the process.
 *
 * It speaks exactly the wire format of the tRPC subscription `inbox.events` (tRPC 11's SSE: a
 * `connected` event, `data:` frames of superjson-serialized events, `serialized-error` to end), on
 * the same path, so the browser's tRPC client cannot tell them apart: `event-stream.test.ts` checks
 * the bytes against the tRPC route's. Whatever is not the plain case — no session, a session that
 * does not resolve, the rate limit, the database down — is left to the tRPC route, which answers it
 * in its own words. The rules are the tRPC procedure's: a staff session, counted once against the
 * rate limit; ended with UNAUTHORIZED once the session is revoked, expires or its staff member is
 * deactivated (checked every SESSION_RECHECK_MS, one query per process for all streams); ended with
 * SERVICE_UNAVAILABLE (which the client retries, then refetches) when the process drains, when the
 * LISTEN connection was re-established (events may have been missed), or when a client reads too
 * slowly to keep up.
 */
export const EVENTS_PATH = '/api/trpc/inbox.events';
/** How often an open events stream checks that its session is still live. */
export const SESSION_RECHECK_MS = 5_000;
/** A stream whose socket has this much unsent is too slow: it is ended, and its client catches up. */
const MAX_UNSENT_BYTES = 1 << 20;
const CONNECTED = Buffer.from('event: connected\ndata: {}\n\n\n');

type Stream = {
  res: ServerResponse;
  sessionId: number;
  end: (code: 'UNAUTHORIZED' | 'SERVICE_UNAVAILABLE', message: string) => void;
};
const streams = new Set<Stream>();
let recheck: NodeJS.Timeout | null = null;

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
    if (res.destroyed) return true; // the client went away meanwhile
    open(res, caller.businessId, caller.sessionId);
    return true;
  } catch {
    return false; // rate limited, database down: the tRPC route answers it
  }
}

function open(res: ServerResponse, businessId: number, sessionId: number) {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
    'X-Content-Type-Options': 'nosniff',
  });
  res.write(CONNECTED);
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
  const { unsubscribe } = subscribeBusiness({
    businessId,
    push(_event, frame) {
      if (closed) return;
      if (res.writableLength > MAX_UNSENT_BYTES)
        return stream.end('SERVICE_UNAVAILABLE', 'Too far behind; reconnect and refetch');
      res.write(frame());
    },
    interrupt: () => stream.end('SERVICE_UNAVAILABLE', 'Live events were interrupted; reconnect and refetch'),
  });
  const onShutdown = () => stream.end('SERVICE_UNAVAILABLE', 'This server is restarting; reconnecting');
  const shutdown = shutdownSignal();
  shutdown.addEventListener('abort', onShutdown, { once: true });
  function cleanup() {
    if (closed) return;
    closed = true;
    unsubscribe();
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

/** tRPC's `serialized-error` frame with the error shape its client reads (the JSON-RPC code decides a retry). */
function errorFrame(code: 'UNAUTHORIZED' | 'SERVICE_UNAVAILABLE', message: string): Buffer {
  const httpStatus = getHTTPStatusCodeFromError(new TRPCError({ code, message }));
  const shape = { message, code: TRPC_ERROR_CODES_BY_KEY[code], data: { code, httpStatus, path: 'inbox.events' } };
  return Buffer.from(`event: serialized-error\ndata: ${JSON.stringify({ json: shape })}\n\n\n`);
}

/** Open fast-path streams in this process (tests, diagnostics). */
export function openEventStreams(): number {
  return streams.size;
}
