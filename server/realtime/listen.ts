import { createSql } from '@/db/client';
import { env } from '@/server/env';
import { logger } from '@/server/logger';
import { EVENTS_CHANNEL, type InboxEvent } from './publish';

/**
 * One LISTEN connection per web process fans PostgreSQL NOTIFY events out to the inbox
 * subscriptions open on this process. Because events travel through the database, a change made
 * by any process (another web instance, the worker, a webhook) reaches every open inbox.
 * postgres.js re-establishes the LISTEN after a connection loss.
 */
type Subscriber = { businessId: number; push: (event: InboxEvent) => void };

type Hub = { subscribers: Map<number, Set<Subscriber>>; ready: Promise<unknown> };
const globalForListen = globalThis as unknown as { __inboxListen?: Hub };

function hub(): Hub {
  if (!globalForListen.__inboxListen) {
    // Subscribers by business: an event costs the streams of its own business, not all of them.
    const subscribers = new Map<number, Set<Subscriber>>();
    const sql = createSql(env().databaseUrl!, { max: 1, idle_timeout: 0 });
    const ready = sql
      .listen(EVENTS_CHANNEL, (payload) => {
        let event: InboxEvent;
        try {
          event = JSON.parse(payload) as InboxEvent;
        } catch {
          return;
        }
        for (const s of subscribers.get(event.businessId) ?? []) s.push(event);
      })
      .catch((err) => logger.error({ err }, 'LISTEN failed'));
    globalForListen.__inboxListen = { subscribers, ready };
  }
  return globalForListen.__inboxListen;
}

/** The events of one business as an async iterable, until `signal` aborts. */
export async function* businessEvents(businessId: number, signal?: AbortSignal): AsyncGenerator<InboxEvent> {
  const { subscribers, ready } = hub();
  const buffered: InboxEvent[] = [];
  let wake: (() => void) | null = null;
  const subscriber: Subscriber = {
    businessId,
    push(event) {
      // A slow client must not grow memory without bound; it refetches on reconnect anyway.
      if (buffered.length < 1000) buffered.push(event);
      wake?.();
    },
  };
  let ofBusiness = subscribers.get(businessId);
  if (!ofBusiness) subscribers.set(businessId, (ofBusiness = new Set()));
  ofBusiness.add(subscriber);
  const aborted = new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve(), { once: true }));
  try {
    await ready;
    while (!signal?.aborted) {
      if (buffered.length === 0) {
        await Promise.race([new Promise<void>((resolve) => (wake = resolve)), aborted]);
        wake = null;
        continue;
      }
      yield buffered.shift()!;
    }
  } finally {
    ofBusiness.delete(subscriber);
    if (ofBusiness.size === 0 && subscribers.get(businessId) === ofBusiness) subscribers.delete(businessId);
  }
}
