import { parentPort, Worker, workerData } from 'node:worker_threads';
import { closeDb } from '@/server/db/client';
import { loadEnv } from '@/server/env';
import { logger, type Logger } from '@/server/logger';
import { exitOnUnhandledRejection } from './rejections';
import { startOutgoingWebhooks } from './outgoing-webhooks';

/**
 * The event log's thread of the worker process (docs/architecture.md#event-log): the dispatchers of
 * the log's handlers and the outgoing webhooks' sender (./outgoing-webhooks.ts) run here, in a
 * thread of their own, so that they keep the default CPU priority (WORKER_EVENTS_NICE, 0) while the
 * rest of the worker, bulk sending, yields at WORKER_NICE (./index.ts). What they do follows what
 * the web processes accept, request by request, and waits for nobody: a webhook's p95 of 500 ms
 * from the event's commit, an assignment within a second, a notification. A niced thread on cores
 * that the web process keeps busy gets a tenth of a core's time, and those waits become seconds
 * (docs/performance.md#benchwebhooks-out). The thread has its own database pool and LISTEN session.
 */

type FromThread = { type: 'tid'; tid: number | null } | { type: 'ready' };
type ToThread = { type: 'stop' };

/**
 * Starts the thread and resolves with its kernel thread id as soon as it runs (before it loads its
 * modules, which it does while the rest of the worker starts); `ready` once its loops run. The thread is part of the worker:
 * when it fails, the process exits (its supervisor starts it again), as a worker that could not
 * start would.
 */
export async function startEventsThread(
  log: Logger,
): Promise<{ tid: number | null; ready: Promise<void>; stop: () => Promise<void> }> {
  // The worker runs under tsx (`node --import tsx`); a thread's loader starts without it, so the
  // thread registers it before loading this file. First it says which kernel thread it is (Linux:
  // /proc/thread-self is `<pid>/task/<tid>`), for setPriority.
  const tsx = import.meta.resolve('tsx/esm/api');
  const thread = new Worker(
    `const { parentPort } = require('node:worker_threads');
     let tid = null;
     try { if (process.platform === 'linux') tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()); } catch {}
     parentPort.postMessage({ type: 'tid', tid });
     import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); })`,
    { eval: true, workerData: { eventsThread: true } },
  );
  let stopping = false;
  const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
  thread.on('error', (err) => {
    log.fatal({ err }, 'the event log thread failed');
    process.exit(1);
  });
  void exited.then(() => {
    if (stopping) return;
    log.fatal('the event log thread stopped unexpectedly');
    process.exit(1);
  });
  let started: (tid: number | null) => void;
  let loaded: () => void;
  const tid = new Promise<number | null>((resolve) => (started = resolve));
  const ready = new Promise<void>((resolve) => (loaded = resolve));
  thread.on('message', (m: FromThread) => (m.type === 'tid' ? started(m.tid) : loaded()));
  return {
    tid: await tid,
    ready,
    async stop() {
      stopping = true;
      thread.postMessage({ type: 'stop' } satisfies ToThread);
      await exited;
    },
  };
}

async function runThread() {
  exitOnUnhandledRejection('unhandled rejection in the event log thread');
  const config = loadEnv();
  const log = logger.child({ process: 'worker', thread: 'events' });
  const loops = startOutgoingWebhooks(config, log);
  parentPort!.postMessage({ type: 'ready' } satisfies FromThread);
  parentPort!.on('message', (m: ToThread) => {
    if (m.type !== 'stop') return;
    void (async () => {
      await loops.stop();
      await closeDb();
      process.exit(0);
    })();
  });
}

// Only in the thread started above (a test runner's threads import this file too).
if ((workerData as { eventsThread?: boolean } | null)?.eventsThread) {
  runThread().catch((err) => {
    logger.fatal({ err }, 'the event log thread failed to start');
    process.exit(1);
  });
}
