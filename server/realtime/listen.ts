import { sql } from 'drizzle-orm';
import { createSql } from '@/db/connect';
import { db } from '@/server/db/client';
import { env } from '@/server/env';
import { logger } from '@/server/logger';
import { isAfter, positionOf, readBacklog, STREAMED_COLUMNS, streamedTypes, type Position, type StreamedRow } from './backlog';
import { frameOf, type InboxEvent } from './frames';
import { streamMeter } from './stream-meter';
import { eventFrame } from './trpc-sse';

/**
 * The tail of the event log that feeds the inbox's live streams: one per web process. It reads
 * the events of the businesses that have streams open on this process, in the log's order, after
 * its cursor and below the oldest transaction still running (server/services/events/dispatch.ts:
 * a (tx_id, id) cursor never skips a later commit), and writes each one's frame (frames.ts),
 * serialized once, to its business's streams. It reads when woken: by `events_appended` (migration
 * 0028: a transaction that appended events committed), when a stream subscribes, and every
 * POLL_MS while any stream is open, in case a wake-up was lost (the LISTEN connection re-established). An event committed
 * while an older transaction still runs is not readable yet, and its wake-up has passed: the tail
 * then reads again after HELD_RETRY_MS until it is.
 *
 * A stream joins at the tail's cursor when the tail next reads (the read that starts after it
 * subscribed): the tail streams it what comes after, and the stream itself replays from the log
 * what came before, after the client's last event (`Last-Event-ID`, backlog.ts), holding the live
 * frames meanwhile; positions already written are dropped, so every event reaches it once, in
 * order. Nothing is lost while PostgreSQL or the LISTEN is away: the tail reads on from its cursor.
 *
 * Every subscriber is a live events stream of a staff session (server/realtime/event-stream.ts),
 * admitted by the stream meter (server/realtime/stream-meter.ts) before it gets anything.
 */
export type Subscriber = {
  businessId: number;
  sessionId: number;
  /** The id of the last event the client received, to replay what came after; null: a new stream. */
  lastEventId: number | null;
  /**
   * One frame, in the log's order, each event once. `id` is its event's (for `refetch`, the event
   * to resume after); `frame()` its bytes (trpc-sse.ts), serialized once for all its business's streams.
   */
  push: (event: InboxEvent, id: number, frame: () => Buffer) => void;
  /** What the client missed could not be read (the database unreachable): end it, its client reconnects. */
  interrupt: () => void;
  /** A newer stream of the same session took this one's place (the session is at its cap). */
  supersede: () => void;
};

export const APPENDED_CHANNEL = 'events_appended';
/** Events per read; a read that fills it is followed by another at once. */
const BATCH = 500;
export const POLL_MS = 5_000;
/**
 * The first wait before reading again events held back by an older transaction, doubled up to
 * HELD_RETRY_MAX_MS: a small query, so a long transaction delays the streams by at most that much
 * past its end.
 */
const HELD_RETRY_MS = 20;
const HELD_RETRY_MAX_MS = 100;

type Pending = { position: Position; event: InboxEvent; id: number; frame: () => Buffer };
type Entry = {
  subscriber: Subscriber;
  /** waiting: not joined yet; replaying: its backlog is being read (live frames held); live. */
  state: 'waiting' | 'replaying' | 'live';
  /** The tail's cursor when it subscribed: a new stream replays from there. */
  subscribedAt: Position | null;
  held: Pending[];
  /** The position of the last frame written: anything at or before it is not written again. */
  last: Position | null;
  closed: boolean;
  joined: (ok: boolean) => void;
};

type Hub = {
  entries: Map<number, Set<Entry>>;
  cursor: Position | null;
  kick: () => void;
};
const globalForTail = globalThis as unknown as { __inboxTail?: Hub };

function hub(): Hub {
  if (globalForTail.__inboxTail) return globalForTail.__inboxTail;
  const entries = new Map<number, Set<Entry>>();
  let running = false;
  let again = false;
  let timer: NodeJS.Timeout | null = null;
  let heldFor = 0;
  const h: Hub = { entries, cursor: null, kick };
  function kick() {
    if (running) {
      again = true;
      return;
    }
    if (timer) clearTimeout(timer);
    timer = null;
    // No stream open: nothing to read, and no poll. The next subscriber kicks, and the tail starts
    // again at the log's end (a cursor left from before would stream it what it did not ask for).
    // A process whose pool was closed (shutting down, a test file's end) so never opens it again.
    if (entries.size === 0) {
      h.cursor = null;
      return;
    }
    running = true;
    void (async () => {
      let next = POLL_MS;
      try {
        let read: { full: boolean; held: boolean };
        do {
          again = false;
          read = await readOnce(h);
          if (read.full) again = true;
        } while (again);
        heldFor = read.held ? heldFor + 1 : 0;
        if (heldFor) next = Math.min(HELD_RETRY_MS * 2 ** (heldFor - 1), HELD_RETRY_MAX_MS);
      } catch (err) {
        // The database away: the next wake-up reads on from the cursor, nothing is lost.
        logger.warn({ err: { message: (err as Error).message } }, 'event log tail read failed');
        next = 500;
      } finally {
        running = false;
        timer = setTimeout(kick, next);
        timer.unref?.();
      }
    })();
  }
  // Every (re)LISTEN reads too: wake-ups sent while the connection was away were lost.
  void listenOn(APPENDED_CHANNEL, kick, kick);
  globalForTail.__inboxTail = h;
  return h;
}

const globalForListener = globalThis as unknown as { __listener?: ReturnType<typeof createSql> };

/**
 * LISTENs on `channel` over the web process's one LISTEN connection, shared by the tail, presence
 * (server/realtime/presence.ts) and notifications (notifications.ts). LISTEN needs a session of its
 * own: DATABASE_LISTEN_URL (direct) when DATABASE_URL is a pooler. postgres.js LISTENs again after a
 * reconnection, calling `onListen` each time. Resolves once the first LISTEN is in place (true), or
 * false when it failed (logged).
 */
export function listenOn(channel: string, onNotify: (payload: string) => void, onListen: () => void): Promise<boolean> {
  const listener = (globalForListener.__listener ??= createSql(env().databaseListenUrl!, { max: 1, idle_timeout: 0 }));
  return listener.listen(channel, onNotify, onListen).then(
    () => true,
    (err: unknown) => {
      logger.error({ err, channel }, 'LISTEN failed');
      return false;
    },
  );
}

/** One read of the tail: joins the waiting streams at the cursor, then streams what follows it. */
async function readOnce(h: Hub): Promise<{ full: boolean; held: boolean }> {
  if (!h.cursor) {
    // A new tail starts at the log's end: the streams replay what came before from the log.
    const [r] = await db.execute<{ xmin: string }>(sql`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`);
    h.cursor = { tx: BigInt(r!.xmin), id: 0 };
  }
  const from = h.cursor;
  const businesses = [...h.entries.keys()];
  for (const set of h.entries.values()) for (const e of set) if (e.state === 'waiting') void join(e, from);
  const rows = await db.execute<StreamedRow & { xmin: string; held: boolean }>(sql`
    with bound as (select pg_snapshot_xmin(pg_current_snapshot()) as xmin)
    select b.xmin::text as xmin, e.*,
           -- committed events of these businesses the bound holds back: read again soon, no wake-up will come
           exists (select 1 from events h where h.tx_id >= b.xmin and h.business_id = any(${sql.param(businesses)}::int[])) as held
    from bound b left join lateral (
      select ${STREAMED_COLUMNS} from events
      where business_id = any(${sql.param(businesses)}::int[]) and ${streamedTypes()}
        and (tx_id, id) > (${String(from.tx)}::xid8, ${from.id}::bigint) and tx_id < b.xmin
      order by tx_id, id
      limit ${BATCH}) e on true
    order by e.tx_id, e.id`);
  const events = rows.filter((r) => r.id !== null);
  for (const row of events) {
    const event = frameOf(row);
    const position = positionOf(row);
    const ofBusiness = h.entries.get(row.business_id);
    if (!event || !ofBusiness) continue;
    let bytes: Buffer | undefined;
    const pending: Pending = { position, event, id: row.id, frame: () => (bytes ??= eventFrame(event, row.id)) };
    for (const e of ofBusiness) if (e.state !== 'waiting') deliver(e, pending);
  }
  const full = events.length === BATCH;
  // Fewer than a batch: every event below the bound was read, so the cursor moves to the bound.
  const end = full ? positionOf(events.at(-1)!) : { tx: BigInt(rows[0]!.xmin), id: 0 };
  if (isAfter(end, h.cursor)) h.cursor = end;
  return { full, held: !full && rows[0]!.held };
}

function deliver(e: Entry, p: Pending) {
  if (e.closed) return;
  if (e.state === 'replaying') e.held.push(p);
  else write(e, p);
}

function write(e: Entry, p: Pending) {
  if (e.last && !isAfter(p.position, e.last)) return; // replayed already
  e.last = p.position;
  e.subscriber.push(p.event, p.id, p.frame);
}

/** The stream joins the tail at `at`: it replays what it missed up to there, then what the tail held for it. */
async function join(e: Entry, at: Position) {
  e.state = 'replaying';
  const { businessId, lastEventId } = e.subscriber;
  try {
    const backlog = await readBacklog(businessId, lastEventId, e.subscribedAt ?? at, at);
    if (e.closed) return;
    if (backlog.ok) {
      e.last = backlog.from;
      for (const row of backlog.rows) {
        const event = frameOf(row)!;
        write(e, { position: positionOf(row), event, id: row.id, frame: () => eventFrame(event, row.id) });
      }
    } else {
      const event: InboxEvent = { type: 'refetch', businessId, conversationIds: [] };
      e.last = at;
      e.subscriber.push(event, backlog.lastId, () => eventFrame(event, backlog.lastId));
    }
  } catch (err) {
    logger.warn({ err: { message: (err as Error).message } }, 'event stream replay failed');
    e.joined(false);
    e.subscriber.interrupt();
    return;
  }
  e.state = 'live';
  const held = e.held;
  e.held = [];
  for (const p of held) write(e, p);
  e.joined(true);
}

/**
 * Subscribes `subscriber` to its business's frames until `unsubscribe` is called, once the stream
 * meter admits it (`ok: false` with the reason when its business is full). The tail (one per
 * process) is started on first use. `joined` resolves once the stream replayed what it missed and
 * is live (false: the replay failed and the stream was interrupted).
 */
export function subscribeBusiness(
  subscriber: Subscriber,
): { ok: true; joined: Promise<boolean>; unsubscribe: () => void } | { ok: false; message: string } {
  const admission = streamMeter().admit({
    businessId: subscriber.businessId,
    sessionId: subscriber.sessionId,
    supersede: () => subscriber.supersede(),
  });
  if (!admission.ok) return admission;
  const h = hub();
  let joined!: (ok: boolean) => void;
  const joining = new Promise<boolean>((resolve) => (joined = resolve));
  const entry: Entry = {
    subscriber,
    state: 'waiting',
    subscribedAt: h.cursor,
    held: [],
    last: null,
    closed: false,
    joined,
  };
  let ofBusiness = h.entries.get(subscriber.businessId);
  if (!ofBusiness) h.entries.set(subscriber.businessId, (ofBusiness = new Set()));
  ofBusiness.add(entry);
  const set = ofBusiness;
  h.kick();
  return {
    ok: true,
    joined: joining,
    unsubscribe() {
      if (entry.closed) return;
      entry.closed = true;
      entry.held = [];
      entry.joined(false);
      admission.release();
      set.delete(entry);
      if (set.size === 0 && h.entries.get(subscriber.businessId) === set) h.entries.delete(subscriber.businessId);
    },
  };
}
