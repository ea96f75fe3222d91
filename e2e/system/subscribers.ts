import http from 'node:http';
import { createSql } from '@/db/connect';
import { EVENTS_CHANNEL, type InboxEvent } from '@/server/services/live-events/publish';
import { requestEventStream, sseParser } from '@/server/testing/sse';

/**
 * The system test's live-event side: inbox event streams held open through the balancer the way
 * the inbox holds them (tRPC SSE with a browser session cookie), reconnecting when one ends and
 * then catching up with a read (as `use-live-inbox.ts` refetches), and a log of every NOTIFY
 * PostgreSQL sent, taken on a LISTEN connection of the harness's own.
 */
type Subscriber = {
  businessId: number;
  cookie: string;
  /** Events received, by key. */
  received: Set<string>;
  /** Periods the stream was open: from `connected` until it ended (end undefined: still open). */
  connected: { from: number; to?: number }[];
  /** When each catch-up read after a reconnect started (it sees everything committed before). */
  catchUps: number[];
  reconnects: number;
  req?: http.ClientRequest;
};

const eventKey = (e: InboxEvent) => `${e.type}|${e.conversationIds.join(',')}|${'messageIds' in e ? e.messageIds.join(',') : ''}`;

type NotifyLog = {
  events: { businessId: number; key: string; at: number }[];
  gaps: { from: number; to?: number }[];
  stop(): Promise<void>;
};

/** LISTENs on the events channel; records every event with when it arrived, and the LISTEN's own gaps. */
export async function logNotifies(databaseUrl: string): Promise<NotifyLog> {
  const sql = createSql(databaseUrl, { max: 1, idle_timeout: 0 });
  const log: NotifyLog = {
    events: [],
    gaps: [],
    async stop() {
      await sql.end({ timeout: 2 });
    },
  };
  let listening = false;
  await sql.listen(
    EVENTS_CHANNEL,
    (payload) => {
      const event = JSON.parse(payload) as InboxEvent;
      log.events.push({ businessId: event.businessId, key: eventKey(event), at: Date.now() });
    },
    () => {
      // (Re)listening: a gap, if there was one, is over.
      const open = log.gaps.at(-1);
      if (listening && open && open.to === undefined) open.to = Date.now();
      listening = true;
    },
  );
  return log;
}

/** Marks the start of a LISTEN outage the harness caused (PostgreSQL stopped). */
export function notifyGapStarts(log: NotifyLog) {
  log.gaps.push({ from: Date.now() });
}

export function startSubscribers(
  baseUrl: string,
  specs: { businessId: number; cookie: string }[],
  catchUp: (s: Subscriber) => Promise<void>,
) {
  const url = new URL('/api/trpc/inbox.events', baseUrl);
  let stopping = false;
  const subscribers: Subscriber[] = specs.map((s) => ({ ...s, received: new Set(), connected: [], catchUps: [], reconnects: 0 }));

  function open(s: Subscriber, isReconnect: boolean) {
    if (stopping) return;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const period = s.connected.at(-1);
      if (period && period.to === undefined) period.to = Date.now();
      if (!stopping) setTimeout(() => open(s, true), 200 + Math.random() * 300);
    };
    const req = requestEventStream(url, s.cookie, {}, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        res.on('end', end);
        res.on('error', end);
        return;
      }
      res.setEncoding('utf8');
      res.on(
        'data',
        sseParser((type, data) => {
          if (type === 'connected') {
            s.connected.push({ from: Date.now() });
            if (isReconnect) {
              s.reconnects++;
              const started = Date.now();
              // A catch-up read that fails (the balancer still settling) is tried again.
              void (async () => {
                for (let i = 0; i < 20 && !stopping; i++) {
                  try {
                    await catchUp(s);
                    s.catchUps.push(started);
                    return;
                  } catch {
                    await new Promise((r) => setTimeout(r, 500));
                  }
                }
              })();
            }
          } else if (type === 'message') {
            try {
              const event = (JSON.parse(data) as { json?: InboxEvent }).json;
              if (event) s.received.add(eventKey(event));
            } catch {
              // not an event
            }
          } else if (type === 'serialized-error' || type === 'return') {
            req.destroy();
          }
        }),
      );
      res.on('end', end);
      res.on('error', end);
      res.on('close', end);
    });
    req.on('error', end);
    req.end();
    s.req = req;
  }

  for (const s of subscribers) open(s, false);
  return {
    subscribers,
    stop() {
      stopping = true;
      for (const s of subscribers) {
        s.req?.destroy();
        const period = s.connected.at(-1);
        if (period && period.to === undefined) period.to = Date.now();
      }
    },
  };
}

/**
 * Every event of a subscriber's business must have reached it: received on the stream, or covered
 * by a catch-up read that started after it (minus `edgeMs`: a read started just before an event's
 * NOTIFY reached the log may already see its commit) and soon after it — a stream that silently
 * drops events and is only reconnected much later does not count as caught up. Returns the events
 * that were neither.
 */
export function missedEvents(s: Subscriber, log: NotifyLog, edgeMs = 2_000, catchUpWithinMs = 30_000) {
  return log.events.filter(
    (e) =>
      e.businessId === s.businessId &&
      !s.received.has(e.key) &&
      !s.catchUps.some((c) => c >= e.at - edgeMs && c <= e.at + catchUpWithinMs),
  );
}
