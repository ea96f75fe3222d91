import { createSql } from '@/db/connect';
import { env } from '@/server/env';
import { logger } from '@/server/logger';
import { EVENTS_CHANNEL, type InboxEvent } from '@/server/services/live-events/publish';
import { streamMeter } from './stream-meter';
import { eventFrame } from './trpc-sse';

/**
 * One LISTEN connection per web process fans PostgreSQL NOTIFY events out to the inbox
 * subscriptions open on this process. Because events travel through the database, a change made
 * by any process (another web instance, the worker, a webhook) reaches every open inbox.
 * postgres.js re-establishes the LISTEN after a connection loss (a PostgreSQL restart); whatever was
 * NOTIFYed in between never reached this process, so every stream open then is interrupted: its
 * client reconnects and refetches, as after any dropped stream.
 *
 * Every subscriber is a live events stream of a staff session (server/realtime/event-stream.ts),
 * admitted by the stream meter (server/realtime/stream-meter.ts) before it gets anything.
 */
export type Subscriber = {
  businessId: number;
  sessionId: number;
  /** `frame()`: the event as one SSE frame (trpc-sse.ts), serialized once per event for all its subscribers. */
  push: (event: InboxEvent, frame: () => Buffer) => void;
  interrupt: () => void;
  /** A newer stream of the same session took this one's place (the session is at its cap). */
  supersede: () => void;
};

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
          const frame = () => (bytes ??= eventFrame(event));
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
