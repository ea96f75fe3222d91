import { createSql } from '@/db/client';
import { env } from '@/server/env';
import { shutdownSignal } from '@/server/http/shutdown';
import { logger } from '@/server/logger';
import { EVENTS_CHANNEL, type InboxEvent } from './publish';

/**
 * One LISTEN connection per web process fans PostgreSQL NOTIFY events out to the inbox
 * subscriptions open on this process. Because events travel through the database, a change made
 * by any process (another web instance, the worker, a webhook) reaches every open inbox.
 * postgres.js re-establishes the LISTEN after a connection loss (a PostgreSQL restart); whatever was
 * NOTIFYed in between never reached this process, so every stream open then is interrupted
 * (EventsInterrupted): its client reconnects and refetches, as after any dropped stream.
 */
type Subscriber = {
  businessId: number;
  /** `frame()`: the event as one SSE frame, serialized once per event for all its subscribers. */
  push: (event: InboxEvent, frame: () => Buffer) => void;
  interrupt: () => void;
};

/** The stream may have missed events (the LISTEN connection was lost and re-established). */
export class EventsInterrupted extends Error {
  constructor() {
    super('Live events were interrupted; reconnect and refetch');
  }
}

type Hub = { subscribers: Map<number, Set<Subscriber>>; ready: Promise<unknown> };
const globalForListen = globalThis as unknown as { __inboxListen?: Hub };

function hub(): Hub {
  if (!globalForListen.__inboxListen) {
    // Subscribers by business: an event costs the streams of its own business, not all of them.
    const subscribers = new Map<number, Set<Subscriber>>();
    // LISTEN needs a session of its own: DATABASE_LISTEN_URL (direct) when DATABASE_URL is a pooler.
    const sql = createSql(env().databaseListenUrl!, { max: 1, idle_timeout: 0 });
    let listened = false;
    const ready = sql
      .listen(
        EVENTS_CHANNEL,
        (payload) => {
          let event: InboxEvent;
          try {
            event = JSON.parse(payload) as InboxEvent;
          } catch {
            return;
          }
          const ofBusiness = subscribers.get(event.businessId);
          if (!ofBusiness) return;
          let bytes: Buffer | undefined;
          const frame = () => (bytes ??= sseFrame(event));
          for (const s of ofBusiness) s.push(event, frame);
        },
        () => {
          // Called on every (re)LISTEN: after the first, the connection was lost in between.
          if (listened) {
            logger.warn('LISTEN re-established; interrupting open event streams so their clients catch up');
            for (const ofBusiness of subscribers.values()) for (const s of ofBusiness) s.interrupt();
          }
          listened = true;
        },
      )
      .catch((err) => logger.error({ err }, 'LISTEN failed'));
    globalForListen.__inboxListen = { subscribers, ready };
  }
  return globalForListen.__inboxListen;
}

/**
 * An event as the tRPC SSE wire format carries it (a `data:` line holding the superjson-serialized
 * value, then a blank line): the frame the fast path (server/realtime/event-stream.ts) writes.
 */
function sseFrame(event: InboxEvent): Buffer {
  // superjson.serialize of plain JSON (numbers, strings, arrays) is `{ json: value }`, no meta.
  return Buffer.from(`data: ${JSON.stringify({ json: event })}\n\n\n`);
}

/**
 * Subscribes `subscriber` to its business's events until the returned function is called. The
 * hub (one LISTEN per process) is started on first use; `ready` resolves once it listens.
 */
export function subscribeBusiness(subscriber: Subscriber): { ready: Promise<unknown>; unsubscribe: () => void } {
  const { subscribers, ready } = hub();
  let ofBusiness = subscribers.get(subscriber.businessId);
  if (!ofBusiness) subscribers.set(subscriber.businessId, (ofBusiness = new Set()));
  ofBusiness.add(subscriber);
  const set = ofBusiness;
  return {
    ready,
    unsubscribe() {
      set.delete(subscriber);
      if (set.size === 0 && subscribers.get(subscriber.businessId) === set) subscribers.delete(subscriber.businessId);
    },
  };
}

/**
 * The events of one business as an async iterable, until `signal` aborts or this process starts
 * shutting down (server/http/shutdown.ts), so no stream holds a draining web process open.
 */
export async function* businessEvents(businessId: number, signal?: AbortSignal): AsyncGenerator<InboxEvent> {
  const buffered: InboxEvent[] = [];
  let wake: (() => void) | null = null;
  let interrupted = false;
  const subscriber: Subscriber = {
    businessId,
    interrupt() {
      interrupted = true;
      wake?.();
    },
    push(event) {
      // A slow client must not grow memory without bound; it refetches on reconnect anyway.
      if (buffered.length < 1000) buffered.push(event);
      wake?.();
    },
  };
  const { ready, unsubscribe } = subscribeBusiness(subscriber);
  const shutdown = shutdownSignal();
  let stop = () => {};
  const aborted = new Promise<void>((resolve) => (stop = resolve));
  signal?.addEventListener('abort', stop, { once: true });
  shutdown.addEventListener('abort', stop, { once: true });
  try {
    await ready;
    while (!signal?.aborted && !shutdown.aborted) {
      if (interrupted) throw new EventsInterrupted();
      if (buffered.length === 0) {
        await Promise.race([new Promise<void>((resolve) => (wake = resolve)), aborted]);
        wake = null;
        continue;
      }
      yield buffered.shift()!;
    }
  } finally {
    // The shutdown signal lives as long as the process: leave no listener behind on it.
    shutdown.removeEventListener('abort', stop);
    signal?.removeEventListener('abort', stop);
    unsubscribe();
  }
}
