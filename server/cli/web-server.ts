import http from 'node:http';
import type { Socket } from 'node:net';
import path from 'node:path';
import next from 'next';
import { closeDb } from '@/server/db/client';
import { loadEnv } from '@/server/env';
import { beginShutdown, isDraining } from '@/server/web/shutdown';
import { logger } from '@/server/logger';
import { logRequest } from '@/server/web/access-log';
import { EVENTS_PATH, serveEventStream } from '@/server/realtime/event-stream';
import { isPlainBeat, servePresenceBeat } from '@/server/trpc/presence-beat';

/**
 * The web server (`npm run start:web`, the web half of `npm start`, and with `--dev` the web half
 * of `npm run dev`): Next.js's request handler (`next({ dev: false })` on the build next.config.mjs
 * names, `NEXT_DIST_DIR` or `.next`; with `--dev`, Next's development server, which compiles on
 * demand and attaches its hot reload to this server) inside a plain Node HTTP server, so that
 * shutdown is ours to run (`next start` exits at once on SIGTERM, cutting requests in flight and
 * every open inbox stream) and the inbox's live events are served by the same code in development
 * as in production (server/realtime/event-stream.ts).
 *
 * On SIGTERM or SIGINT:
 *  1. draining: `GET /api/v1/health/live` answers 503, so the balancer stops routing here;
 *  2. the listening socket closes: new connections are refused (a balancer retries them elsewhere);
 *  3. the open inbox events streams end at once (server/web/shutdown.ts → server/realtime/event-stream.ts)
 *     with a retryable error, so browsers reconnect to another process;
 *  4. requests in flight finish; idle keep-alive connections are closed, and answers given while
 *     draining carry `Connection: close`;
 *  5. the database pool closes and the process exits 0; past SHUTDOWN_TIMEOUT_SECONDS (default 20)
 *     the remaining connections are cut and it exits 1.
 *
 * Flags: `--port N` (else PORT, else 3000), `--hostname H` (else every interface), `--dev`.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main() {
  const dev = process.argv.includes('--dev');
  (process.env as Record<string, string>).NODE_ENV = dev ? 'development' : 'production';
  const config = loadEnv();
  const port = Number(flag('port') ?? config.port);
  const hostname = flag('hostname') || undefined;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: not a port number: ${flag('port')}`);
  const log = logger.child({ process: 'web' });

  const app = next({ dev, dir: ROOT, port, hostname });
  await app.prepare();
  const handle = app.getRequestHandler();

  const nextHandle = (req: http.IncomingMessage, res: http.ServerResponse) =>
    handle(req, res).catch((err: unknown) => {
      log.error({ err }, 'request handler failed');
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    });
  const server = http.createServer((req, res) => {
    if (dev && logsHere(req.url)) {
      const started = performance.now();
      res.once('close', () => logRequest(log, req.method ?? '', req.url ?? '/', res.statusCode, started));
    }
    // A connection that outlives the drain would keep the process up: answer, then close it.
    if (isDraining()) res.setHeader('Connection', 'close');
    // The inbox's live events: served here, in tRPC's wire format, without Next.js (server/realtime/event-stream.ts).
    if (req.method === 'GET' && req.url?.split('?')[0] === EVENTS_PATH) {
      void serveEventStream(req, res).then((served) => {
        if (!served) void nextHandle(req, res);
      });
      return;
    }
    // Presence beats, every 10 s from every open inbox: tRPC without Next.js (server/trpc/presence-beat.ts).
    if (isPlainBeat(req)) {
      servePresenceBeat(req, res).catch((err: unknown) => {
        log.error({ err }, 'presence beat failed');
        if (!res.headersSent) res.statusCode = 500;
        res.end();
      });
      return;
    }
    void nextHandle(req, res);
  });
  // An idle keep-alive connection is kept longer than the clients and balancers in front of us keep
  // theirs (AWS's balancers: 60 s): the side that closes an idle connection must be the client,
  // else the server may close it just as a request is sent on it, and that request (a provider's
  // webhook, say) fails with ECONNRESET. Node's default is 5 s. Headers must come within it too.
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // Upgraded connections: only the development server's hot reload uses them (Next attaches its
  // handler to this server); they never finish by themselves, so a drain ends them at once.
  const upgraded = new Set<Socket>();
  server.on('upgrade', (_req, socket: Socket) => {
    upgraded.add(socket);
    socket.once('close', () => upgraded.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, hostname, () => resolve());
  });
  log.info({ port, hostname: hostname ?? '*', shutdownTimeoutSeconds: config.shutdownTimeoutSeconds }, 'web server ready');

  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    // tsx and `npm start` pass a signal on to the whole group: the second delivery changes nothing.
    if (stopping) return;
    stopping = true;
    const started = Date.now();
    const deadline = started + config.shutdownTimeoutSeconds * 1000;
    log.info({ signal, connections: sockets.size }, 'web draining');
    beginShutdown();
    for (const socket of upgraded) socket.destroy();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Keep-alive connections whose request finished are closed as they become idle.
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    const outcome = await Promise.race([
      closed.then(() => 'drained' as const),
      sleep(deadline - Date.now()).then(() => 'timeout' as const),
    ]);
    clearInterval(sweep);
    if (outcome === 'timeout') {
      log.warn(
        { connections: sockets.size, timeoutSeconds: config.shutdownTimeoutSeconds },
        'drain timed out: closing the remaining connections',
      );
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
    }
    // What is left of the bound (at least 1 s, for handlers cut short above) to close the pool.
    await Promise.race([
      closeDb().catch((err: unknown) => log.warn({ err }, 'closing the database pool failed')),
      sleep(Math.max(deadline - Date.now(), 1_000)),
    ]);
    log.info({ ms: Date.now() - started, outcome }, 'web stopped');
    process.exit(outcome === 'drained' ? 0 : 1);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/**
 * In development, the requests this server logs: pages, tRPC, the live events stream, `/login` —
 * Next.js's own request log is off (next.config.mjs). Not the REST API (its wrapper logs each request,
 * server/http/route.ts) nor Next's assets and hot reload. In production only the REST API is logged.
 */
function logsHere(url: string | undefined): boolean {
  return !!url && !url.startsWith('/api/v1/') && !url.startsWith('/_next/') && !url.startsWith('/__nextjs');
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(ms, 0)));

main().catch((err) => {
  logger.fatal({ err }, 'web server failed to start');
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
