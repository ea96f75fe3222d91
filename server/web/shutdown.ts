import { setMaxListeners } from 'node:events';

/**
 * The web process's shutdown state, process-wide. The production web server
 * (server/cli/web-server.ts) calls `beginShutdown()` on SIGTERM/SIGINT; from then on
 * `GET /api/v1/health/live` answers 503 (the balancer stops routing here) and every open inbox
 * events stream ends (server/realtime/listen.ts), so browsers reconnect to another process.
 *
 * Kept on globalThis: the custom server and the route modules Next.js compiled into its build are
 * separate module instances in the same process, and must see the same state.
 */
type ShutdownState = { controller: AbortController };

const KEY = Symbol.for('convo-messaging.shutdown');
const globalForShutdown = globalThis as unknown as { [KEY]?: ShutdownState };

function state(): ShutdownState {
  if (!globalForShutdown[KEY]) {
    const controller = new AbortController();
    // One listener per open events stream: many are expected, none leaks (each is removed).
    setMaxListeners(0, controller.signal);
    globalForShutdown[KEY] = { controller };
  }
  return globalForShutdown[KEY];
}

/** Aborts when this process starts shutting down; never before. */
export function shutdownSignal(): AbortSignal {
  return state().controller.signal;
}

/** True once shutdown has begun: the process finishes what it has and takes nothing new. */
export function isDraining(): boolean {
  return state().controller.signal.aborted;
}

/** Starts draining (idempotent). */
export function beginShutdown(): void {
  state().controller.abort(new Error('the web process is shutting down'));
}
