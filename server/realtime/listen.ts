import { createSql } from '@/db/client';
import { env } from '@/server/env';
import { shutdownSignal } from '@/server/http/shutdown';
import { logger } from '@/server/logger';
import { STREAM_REFUSED_CODE, STREAM_SUPERSEDED } from '@/server/shared/live-events';
import { EVENTS_CHANNEL, type InboxEvent } from './publish';
import { streamLimits, streamMeter } from './stream-meter';

/**
 * One LISTEN connection per web process fans PostgreSQL NOTIFY events out to the inbox
 * subscriptions open on this process. Because events travel through the database, a change made
 * by any process (another web instance, the worker, a webhook) reaches every open inbox.
 * postgres.js re-establishes the LISTEN after a connection loss (a PostgreSQL restart); whatever was
 * NOTIFYed in between never reached this process, so every stream open then is interrupted
 * (EventsInterrupted): its client reconnects and refetches, as after any dropped stream.
 *
 * Every subscriber is a live events stream of a staff session, admitted by the stream meter
 * (server/realtime/stream-meter.ts) before it gets anything: both stream implementations subscribe
 * here, so both are held to the same caps.
 */
type Subscriber = {
  businessId: number;
  sessionId: number;
  /** `frame()`: the event as one SSE frame, serialized once per event for all its subscribers. */
  push: (event: InboxEvent, frame: () => Buffer) => void;
  interrupt: () => void;
  /** A newer stream of the same session took this one's place (the session is at its cap). */
  supersede: () => void;
};

/**
 * Why a stream ended, with the tRPC error code its client sees (docs/api.md#live-events):
 * SERVICE_UNAVAILABLE is retried by the client, then followed by a refetch.
 */
export class StreamEnded extends Error {
  constructor(
    readonly code: 'SERVICE_UNAVAILABLE' | typeof STREAM_SUPERSEDED.code | typeof STREAM_REFUSED_CODE,
    message: string,
  ) {
    super(message);
  }
}

/** The stream may have missed events (the LISTEN connection was lost and re-established). */
export class EventsInterrupted extends StreamEnded {
  constructor() {
    super('SERVICE_UNAVAILABLE', 'Live events were interrupted; reconnect and refetch');
  }
}

/** What ends a reader that fell more than EVENT_STREAM_MAX_UNSENT_KIB behind. */
export const TOO_FAR_BEHIND = 'Too far behind; reconnect and refetch';

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
 * Subscribes `subscriber` to its business's events until `unsubscribe` is called, once the stream
 * meter admits it (`ok: false` with the reason when its business is full). The hub (one LISTEN per
 * process) is started on first use; `ready` resolves once it listens.
 */
export function subscribeBusiness(
  subscriber: Subscriber,
): { ok: true; ready: Promise<unknown>; unsubscribe: () => void } | { ok: false; message: string } {
  const admission = streamMeter().admit({
    businessId: subscriber.businessId,
    sessionId: subscriber.sessionId,
    supersede: () => subscriber.supersede(),
  });
  if (!admission.ok) return admission;
  const { subscribers, ready } = hub();
  let ofBusiness = subscribers.get(subscriber.businessId);
  if (!ofBusiness) subscribers.set(subscriber.businessId, (ofBusiness = new Set()));
  ofBusiness.add(subscriber);
  const set = ofBusiness;
  return {
    ok: true,
    ready,
    unsubscribe() {
      admission.release();
      set.delete(subscriber);
      if (set.size === 0 && subscribers.get(subscriber.businessId) === set) subscribers.delete(subscriber.businessId);
    },
  };
}

/**
 * The events of one business, for one stream of a staff session, as an async iterable, until
 * `signal` aborts or this process starts shutting down (server/http/shutdown.ts), so no stream holds
 * a draining web process open. It ends with StreamEnded when the stream meter refuses it (business
 * full), when a newer stream of the same session takes its place, when the reader falls behind by
 * more than EVENT_STREAM_MAX_UNSENT_KIB of events (what is buffered here is what it has not taken;
 * tRPC pulls one event at a time as the response is written), or when the LISTEN was re-established.
 */
export async function* businessEvents(
  stream: { businessId: number; sessionId: number },
  signal?: AbortSignal,
): AsyncGenerator<InboxEvent> {
  const buffered: { event: InboxEvent; bytes: number }[] = [];
  let bufferedBytes = 0;
  let wake: (() => void) | null = null;
  let ended: StreamEnded | null = null;
  const end = (reason: StreamEnded) => {
    ended ??= reason;
    buffered.length = 0; // of no use to a client that refetches, and memory held meanwhile
    wake?.();
  };
  const { maxUnsentBytes } = streamLimits();
  const subscription = subscribeBusiness({
    ...stream,
    interrupt: () => end(new EventsInterrupted()),
    supersede: () => end(new StreamEnded(STREAM_SUPERSEDED.code, STREAM_SUPERSEDED.message)),
    push(event, frame) {
      if (ended) return;
      const bytes = frame().length;
      if (bufferedBytes + bytes > maxUnsentBytes) return end(new StreamEnded('SERVICE_UNAVAILABLE', TOO_FAR_BEHIND));
      buffered.push({ event, bytes });
      bufferedBytes += bytes;
      wake?.();
    },
  });
  if (!subscription.ok) throw new StreamEnded(STREAM_REFUSED_CODE, subscription.message);
  const shutdown = shutdownSignal();
  let stop = () => {};
  const aborted = new Promise<void>((resolve) => (stop = resolve));
  signal?.addEventListener('abort', stop, { once: true });
  shutdown.addEventListener('abort', stop, { once: true });
  try {
    await subscription.ready;
    while (!signal?.aborted && !shutdown.aborted) {
      if (ended) throw ended;
      const next = buffered.shift();
      if (!next) {
        await Promise.race([new Promise<void>((resolve) => (wake = resolve)), aborted]);
        wake = null;
        continue;
      }
      bufferedBytes -= next.bytes;
      yield next.event;
    }
  } finally {
    // The shutdown signal lives as long as the process: leave no listener behind on it.
    shutdown.removeEventListener('abort', stop);
    signal?.removeEventListener('abort', stop);
    subscription.unsubscribe();
  }
}
