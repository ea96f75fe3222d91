import http from 'node:http';
import type { createSql } from '@/db/connect';
import { STREAMED_TYPES } from '@/server/realtime/frames';
import { requestEventStream, sseParser } from '@/server/testing/sse';

/**
 * The system test's live-event side: inbox event streams held open through the balancer the way
 * the inbox holds them (tRPC SSE with a browser session cookie). A stream that ends (a web process
 * killed or draining, PostgreSQL restarting) is opened again with the id of the last event it
 * received, as the browser's EventSource sends it (`Last-Event-ID`); and every subscriber also
 * drops its stream by itself now and then and resumes the same way. At the end each one's frames
 * are compared with its business's events in the log.
 */
type Subscriber = {
  businessId: number;
  cookie: string;
  /** Event ids received, in order, across all its connections. */
  received: number[];
  /** `refetch` frames: the last id received before, and the id it carried. */
  refetches: { after: number | null; id: number }[];
  /** When it first connected: events committed before are not its to receive. */
  firstConnectedAt: number | null;
  reconnects: number;
  /** Drops it made itself, to resume. */
  drops: number;
  req?: http.ClientRequest;
};

/** How often, on average, a subscriber drops its own stream to resume it (ms). */
const DROP_EVERY_MS = 20_000;

export function startSubscribers(baseUrl: string, specs: { businessId: number; cookie: string }[]) {
  const url = new URL('/api/trpc/inbox.events', baseUrl);
  let stopping = false;
  const subscribers: Subscriber[] = specs.map((s) => ({
    ...s,
    received: [],
    refetches: [],
    firstConnectedAt: null,
    reconnects: 0,
    drops: 0,
  }));

  function open(s: Subscriber, isReconnect: boolean) {
    if (stopping) return;
    let ended = false;
    let dropTimer: NodeJS.Timeout | undefined;
    const end = () => {
      if (ended) return;
      ended = true;
      clearTimeout(dropTimer);
      if (!stopping) setTimeout(() => open(s, true), 200 + Math.random() * 300);
    };
    const last = s.received.at(-1) ?? s.refetches.at(-1)?.id;
    const headers: Record<string, string> = last === undefined ? {} : { 'last-event-id': String(last) };
    const req = requestEventStream(url, s.cookie, headers, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        res.on('end', end);
        res.on('error', end);
        return;
      }
      res.setEncoding('utf8');
      res.on(
        'data',
        sseParser((type, data, id) => {
          if (type === 'connected') {
            s.firstConnectedAt ??= Date.now();
            if (isReconnect) s.reconnects++;
            // Mid-run, the subscriber drops the stream itself, to resume it from its last event.
            dropTimer = setTimeout(
              () => {
                s.drops++;
                req.destroy();
              },
              DROP_EVERY_MS * (0.5 + Math.random()),
            );
          } else if (type === 'message' && id !== undefined) {
            const event = (JSON.parse(data) as { json: { type: string } }).json;
            if (event.type === 'refetch') s.refetches.push({ after: s.received.at(-1) ?? null, id: Number(id) });
            else s.received.push(Number(id));
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
      for (const s of subscribers) s.req?.destroy();
    },
  };
}

/** A business's streamed events in the log's order, with when their transactions began. */
export async function businessLog(q: ReturnType<typeof createSql>, businessId: number) {
  return q<{ id: number; occurred_at: Date }[]>`
    select id::int as id, occurred_at from events
    where business_id = ${businessId} and type = any(${STREAMED_TYPES as string[]}::text[])
    order by tx_id, id`;
}

/**
 * Every event of the subscriber's business from its first connection to the end, in the log's
 * order, exactly once, across every reconnect and resume: its ids must be one unbroken run of the
 * business's log. A `refetch` (the inbox reloads) is allowed only past the replay bound (more than
 * `bound` events missed); the run starts again after its id. `edgeMs`: an event whose transaction
 * began within this of the first connection, or of the streams' stop, may or may not have reached it.
 */
export function deliveryFailures(
  s: Subscriber,
  log: { id: number; occurred_at: Date }[],
  stoppedAt: number,
  bound: number,
  edgeMs = 2_000,
): string[] {
  const failures: string[] = [];
  const at = new Map(log.map((e, i) => [e.id, i]));
  const received = s.received;
  if (s.firstConnectedAt === null) return ['never connected'];
  // Where the run begins: the first event received, and nothing before it that began well after the connection.
  let next = received.length ? at.get(received[0]!) : log.length;
  if (next === undefined) return [`received ${received[0]}, not an event of its business`];
  const early = log.slice(0, next).filter((e) => e.occurred_at.getTime() > s.firstConnectedAt! + edgeMs);
  if (early.length) failures.push(`missed ${early.length} events before its first (${early[0]!.id}…)`);
  const refetches = [...s.refetches];
  for (const id of received) {
    const want = log[next];
    if (want?.id === id) {
      next++;
      continue;
    }
    // A refetch between them: the missed run must have been past the bound.
    const r = refetches[0];
    const previous = next > 0 ? log[next - 1]!.id : null;
    if (r && r.after === previous) {
      refetches.shift();
      const resumeAt = r.id === 0 ? 0 : at.get(r.id)! + 1;
      if (resumeAt - next <= bound) failures.push(`told to refetch after ${previous} with only ${resumeAt - next} events missed`);
      next = resumeAt;
      if (log[next]?.id === id) {
        next++;
        continue;
      }
    }
    const where = at.get(id);
    failures.push(
      where === undefined
        ? `received ${id}, not an event of its business`
        : where < next
          ? `received ${id} again or out of order (expected ${want?.id ?? 'nothing'})`
          : `missed ${where - next} events (${want!.id}…) before ${id}`,
    );
    if (where !== undefined && where >= next) next = where + 1;
  }
  const late = log.slice(next).filter((e) => e.occurred_at.getTime() < stoppedAt - edgeMs);
  if (late.length) failures.push(`never received the last ${late.length} events (${late[0]!.id}…)`);
  return failures.slice(0, 5);
}
