import type { IncomingMessage, ServerResponse } from 'node:http';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { createContext, router } from './init';
import { presenceRouter } from './routers/presence';
import { requestIdOf } from '@/server/web/request-id';

/**
 * `presence.beat` served by our web server (server/cli/web-server.ts) through tRPC's own fetch
 * handler, the same procedure and middleware as the tRPC route (session, rate limit, same-origin
 * check, bounded input), but without Next.js's routing around it: every open inbox beats every
 * 10 s, and Next's per-request work was most of a beat's cost (docs/performance.md#benchpresence).
 * Only the plain case comes here (a single unbatched call with a small body of declared length);
 * anything else goes on to the tRPC route as before.
 */
export const BEAT_PATH = '/api/trpc/presence.beat';
/** The largest body served here; a beat is about 60 bytes. */
const MAX_BEAT_BYTES = 1024;

const beatRouter = router({ presence: presenceRouter });

/**
 * The headers next.config.mjs gives every answer under /api (this one never passes through it):
 * nothing to sniff, frame or load.
 */
const API_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'strict-origin-when-cross-origin',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
};

/** Is this request a plain beat, for servePresenceBeat? Decided on the head alone, before the body is read. */
export function isPlainBeat(req: IncomingMessage): boolean {
  if (req.method !== 'POST' || req.url?.split('?')[0] !== BEAT_PATH) return false;
  const length = Number(req.headers['content-length']);
  return Number.isInteger(length) && length > 0 && length <= MAX_BEAT_BYTES;
}

/** Answers a plain beat (isPlainBeat) as the tRPC route would. */
export async function servePresenceBeat(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
  const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url}`, {
    method: 'POST',
    headers,
    body: new Uint8Array(Buffer.concat(chunks)),
  });
  const requestId = requestIdOf(request);
  const response = await fetchRequestHandler({
    endpoint: '/api/trpc',
    req: request,
    router: beatRouter,
    createContext: () => createContext({ req: request, requestId }),
    responseMeta: () => ({ headers: { 'X-Request-Id': requestId } }),
  });
  res.writeHead(response.status, { ...Object.fromEntries(response.headers), ...API_HEADERS });
  res.end(Buffer.from(await response.arrayBuffer()));
}
