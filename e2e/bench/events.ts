import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import zlib from 'node:zlib';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { requestEventStream, sseParser } from '@/server/testing/sse';
import { forkChild } from './child';
import { startBeater, type BeatStats, type Stopped } from './presence-beats';

/**
 * `npm run bench:events`: many open inboxes on ONE production web process.
 *
 * 1. Seeds its own data in a throw-away embedded PostgreSQL (BENCH_DATABASE_URL to use another):
 *    --businesses businesses (20) with 5 staff each, and one browser session per stream, made by the
 *    services behind POST /auth/token and GET /login (issueSession, issueLoginCode, redeemLoginCode)
 *    in this process, so the server's memory holds only the streams; the stream sends it as the
 *    `session` cookie, as a browser does. One session per stream stays under EVENT_STREAMS_PER_SESSION;
 *    the server gets an EVENT_STREAMS_PER_BUSINESS with room for every stream of a business (twice
 *    --streams / --businesses, at least the default 200) unless the environment sets one.
 * 2. Starts the production web server (server/cli/web-server.ts, as `npm start` runs it) on the
 *    .next-e2e build (ensureProductionBuild: rebuilt when older than the sources; BENCH_BUILD=1
 *    forces, BENCH_SKIP_BUILD=1 skips), and reads RSS and CPU from /proc for the process that owns the
 *    listening socket; PostgreSQL's CPU is the postmaster's and its children's.
 * 3. Opens --streams (2,000) tRPC SSE subscriptions (GET /api/trpc/inbox.events, raw http.request
 *    with a browser's Accept-Encoding; `--accept-encoding identity` for none) from --readers (2) child
 *    processes, round-robin over the businesses; a stream is ready once a probe event logged for
 *    its business reached it (so the log's tail feeds it).
 * 4. --idle (10) seconds with every stream open: what open inboxes cost when nothing happens (the
 *    session re-check every 5 s). Then --repeat (1) publish phases: --rate (50) events/s for
 *    --seconds (30), each appended to the event log in a transaction of its own (recordEvents, which
 *    wakes the tail with events_appended), round-robin over the businesses, each stamped with its
 *    send time; every stream of the event's business must get it exactly once. A phase waits for stragglers until 15 s pass without one (120 s at most).
 *
 * Latency: from just before the event's transaction to the reader's 'data' callback for the chunk that carried the
 * event (one clock, performance.timeOrigin + now(), in every process of this machine).
 * Exits 1 only on a hard failure (a stream that did not connect or ended, an event lost or
 * duplicated, a publish that failed); performance targets are printed beside the figures.
 * Diagnostics: BENCH_WEB_NODE_ARGS (node flags for the server: --cpu-prof, --trace-gc),
 * BENCH_WEB_LOG=file (the server's output), BENCH_DEBUG=1 (what the readers saw).
 */

type StreamSpec = { idx: number; cookie: string; businessId: number; staffId: number };
/** A staff member whose beats stopped (--presence): the first frame that shows them gone, and when it came. */
type Watch = { businessId: number; conversationId: number; staffId: number };
type ToReader =
  | { cmd: 'open'; base: string; streams: StreamSpec[]; concurrency: number; acceptEncoding: string }
  | { cmd: 'status'; probe: number }
  | { cmd: 'run'; run: number }
  | { cmd: 'count'; run: number }
  | { cmd: 'collect'; run: number }
  | { cmd: 'watch'; watch: Watch[] }
  | { cmd: 'gone' }
  | { cmd: 'close' };
type Opened = { type: 'opened'; connectMs: number[]; failures: { idx: number; reason: string }[] };
type Status = {
  type: 'status';
  open: number;
  probed: number;
  ended: { idx: number; reason: string }[];
  bytes: number;
  kinds: Record<string, number>;
  encodings: Record<string, number>;
  /** Presence frames received (--presence). */
  presenceFrames: number;
};
/** When each watched staff member was first shown gone, by `businessId,conversationId,staffId` (0: not yet). */
type Gone = { type: 'gone'; at: [string, number][] };
type Count = { type: 'count'; received: number };
type Collected = {
  type: 'collected';
  latencies: number[];
  /** When the last event of the run arrived (0 if none). */
  lastAt: number;
  /** Arrival times of the run's events, in order. */
  arrivals: number[];
  receivedByStream: [number, number][];
  duplicates: number;
  foreign: number;
  cpuMs: number;
  wallMs: number;
  loopP99Ms: number;
};
type FromReader = Opened | Status | Count | Collected | Gone | { type: 'watching' };

/**
 * What the bench says in each event: the frame carries ids only, so the run and sequence number
 * ride in the conversation id and the send time (microseconds since the epoch) in the message id.
 */
type Stamp = { run: number; seq: number; sentAt: number };
const stampIds = (s: Stamp) => ({ conversationId: s.run * 1_000_000 + s.seq + 1, messageId: Math.round(s.sentAt * 1000) });
const unstamp = (conversationId: number, messageId: number): Stamp => ({
  run: Math.floor((conversationId - 1) / 1_000_000),
  seq: (conversationId - 1) % 1_000_000,
  sentAt: messageId / 1000,
});

const now = () => performance.timeOrigin + performance.now();

// -------------------------------------------------------------------------------------------------
// Reader (child process): holds a share of the SSE streams and timestamps what arrives.

function reader() {
  type Stream = {
    spec: StreamSpec;
    req?: http.ClientRequest;
    connected: boolean;
    ended?: string;
    lastProbe: number;
    seen: Set<number>;
  };
  const streams: Stream[] = [];
  let run = -1;
  let latencies: number[] = [];
  let arrivals: number[] = [];
  let received = 0;
  let duplicates = 0;
  let foreign = 0;
  let lastAt = 0;
  let closing = false;
  let bytes = 0;
  const kinds: Record<string, number> = {};
  const encodings: Record<string, number> = {};
  let presenceFrames = 0;
  // Watched staff by conversation (`businessId,conversationId`): staff id → when first shown gone (0: not yet).
  const watched = new Map<string, Map<number, number>>();
  let cpuAt = process.cpuUsage();
  let wallAt = now();
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const send = (m: FromReader) => process.send!(m);

  function onEvent(s: Stream, data: string, at: number) {
    let parsed: {
      json?: {
        type?: string;
        businessId?: number;
        conversationIds?: number[];
        messageIds?: number[];
        snapshot?: boolean;
        conversations?: { conversationId: number; staff: { staffId: number }[] }[];
      };
    };
    try {
      parsed = JSON.parse(data);
    } catch {
      return;
    }
    const event = parsed.json;
    if (!event) return;
    if (event.businessId !== s.spec.businessId) foreign++;
    if (event.type === 'presence') {
      presenceFrames++;
      for (const c of event.conversations ?? []) {
        const staff = watched.get(`${event.businessId},${c.conversationId}`);
        if (!staff) continue;
        for (const [staffId, goneAt] of staff)
          if (!goneAt && staffId !== s.spec.staffId && !c.staff.some((x) => x.staffId === staffId)) staff.set(staffId, at);
      }
      return;
    }
    if (event.type === 'conversation.updated') {
      s.lastProbe = Math.max(s.lastProbe, event.conversationIds?.[0] ?? 0);
      return;
    }
    if (event.type !== 'message.created') return;
    const stamp = unstamp(event.conversationIds?.[0] ?? 0, event.messageIds?.[0] ?? 0);
    if (stamp.run !== run) return;
    if (s.seen.has(stamp.seq)) {
      duplicates++;
      return;
    }
    s.seen.add(stamp.seq);
    received++;
    lastAt = Math.max(lastAt, at);
    arrivals.push(at);
    latencies.push(at - stamp.sentAt);
  }

  function open(base: string, s: Stream, acceptEncoding: string): Promise<number> {
    const url = new URL('/api/trpc/inbox.events', base);
    const started = now();
    return new Promise<number>((resolve, reject) => {
      const req = requestEventStream(url, s.spec.cookie, acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}, (res) => {
        if (res.statusCode !== 200 || !String(res.headers['content-type']).startsWith('text/event-stream')) {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => reject(new Error(`HTTP ${res.statusCode}: ${body.slice(0, 200)}`)));
          return;
        }
        // What EventSource does: the body decoded as the server encoded it (Next.js compresses by Accept-Encoding).
        const encoding = String(res.headers['content-encoding'] ?? 'identity');
        encodings[encoding] = (encodings[encoding] ?? 0) + 1;
        const body: NodeJS.ReadableStream =
          encoding === 'gzip'
            ? res.pipe(zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH }))
            : encoding === 'deflate'
              ? res.pipe(zlib.createInflate({ flush: zlib.constants.Z_SYNC_FLUSH }))
              : encoding === 'br'
                ? res.pipe(zlib.createBrotliDecompress({ flush: zlib.constants.BROTLI_OPERATION_FLUSH }))
                : res;
        body.setEncoding('utf8');
        let at = 0;
        const parse = sseParser((event, data) => {
          kinds[event] = (kinds[event] ?? 0) + 1;
          if (event === 'connected') {
            if (!s.connected) {
              s.connected = true;
              resolve(at - started);
            }
          } else if (event === 'message') onEvent(s, data, at);
          else if (event === 'serialized-error') s.ended ??= `error event: ${data.slice(0, 200)}`;
          else if (event === 'return') s.ended ??= 'the server ended the stream';
        });
        body.on('data', (chunk: string) => {
          at = now();
          bytes += chunk.length;
          parse(chunk);
        });
        body.on('end', () => {
          if (!closing) s.ended ??= 'the response ended';
        });
        body.on('error', (err: Error) => {
          if (!closing) s.ended ??= `response error: ${err.message}`;
        });
      });
      req.on('error', (err) => {
        if (!s.connected) reject(err);
        else if (!closing) s.ended ??= `socket error: ${err.message}`;
      });
      req.end();
      s.req = req;
    });
  }

  process.on('message', async (m: ToReader) => {
    if (m.cmd === 'open') {
      for (const spec of m.streams) streams.push({ spec, connected: false, lastProbe: 0, seen: new Set() });
      const connectMs: number[] = [];
      const failures: Opened['failures'] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(m.concurrency, streams.length) }, async () => {
          while (next < streams.length) {
            const s = streams[next++]!;
            try {
              connectMs.push(await open(m.base, s, m.acceptEncoding));
            } catch (err) {
              s.ended = `connect failed: ${(err as Error).message}`;
              failures.push({ idx: s.spec.idx, reason: s.ended });
            }
          }
        }),
      );
      send({ type: 'opened', connectMs, failures });
    } else if (m.cmd === 'status') {
      const ended = streams.filter((s) => s.ended).map((s) => ({ idx: s.spec.idx, reason: s.ended! }));
      send({
        type: 'status',
        open: streams.filter((s) => s.connected && !s.ended).length,
        probed: streams.filter((s) => s.lastProbe >= m.probe).length,
        ended,
        bytes,
        kinds,
        encodings,
        presenceFrames,
      });
    } else if (m.cmd === 'watch') {
      for (const w of m.watch) {
        const key = `${w.businessId},${w.conversationId}`;
        if (!watched.has(key)) watched.set(key, new Map());
        watched.get(key)!.set(w.staffId, 0);
      }
      send({ type: 'watching' });
    } else if (m.cmd === 'gone') {
      const at: [string, number][] = [];
      for (const [key, staff] of watched) for (const [staffId, goneAt] of staff) at.push([`${key},${staffId}`, goneAt]);
      send({ type: 'gone', at });
    } else if (m.cmd === 'run') {
      run = m.run;
      latencies = [];
      arrivals = [];
      received = 0;
      duplicates = 0;
      foreign = 0;
      lastAt = 0;
      for (const s of streams) s.seen.clear();
      cpuAt = process.cpuUsage();
      wallAt = now();
      loop.reset();
      send({ type: 'count', received: 0 });
    } else if (m.cmd === 'count') {
      send({ type: 'count', received });
    } else if (m.cmd === 'collect') {
      const cpu = process.cpuUsage(cpuAt);
      send({
        type: 'collected',
        latencies,
        lastAt,
        arrivals,
        receivedByStream: streams.map((s) => [s.spec.idx, s.seen.size]),
        duplicates,
        foreign,
        cpuMs: (cpu.user + cpu.system) / 1000,
        wallMs: now() - wallAt,
        loopP99Ms: loop.percentile(99) / 1e6,
      });
    } else if (m.cmd === 'close') {
      closing = true;
      for (const s of streams) s.req?.destroy();
      setTimeout(() => process.exit(0), 100);
    }
  });
  process.on('disconnect', () => process.exit(0));
}

// -------------------------------------------------------------------------------------------------
// Helpers for the main process: flags, /proc, the production server.

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} needs a positive number`);
  return value;
}

const CLK_TCK = 100;

/** utime + stime of a process (all its threads), ms; with `children`, also its exited children's. */
function cpuMsOf(pid: number, children = false): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]) + (children ? Number(fields[13]) + Number(fields[14]) : 0);
  return (ticks * 1000) / CLK_TCK;
}

function statusKb(pid: number, key: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${key}:`));
  return Number(line?.match(/(\d+)/)?.[1] ?? NaN);
}

function parentOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return -1;
  }
}

function allPids(): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const pid of allPids()) {
    const ppid = parentOf(pid);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid)!.push(pid);
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    out.push(pid);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

/** The process (the spawned one or a descendant) that holds the socket listening on `port`. */
function listeningPid(root: number, port: number): number | null {
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || cols[3] !== '0A') continue;
      if (parseInt(cols[1]!.split(':')[1]!, 16) === port) inodes.add(cols[9]!);
    }
  }
  for (const pid of descendants(root)) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = readlinkSync(`/proc/${pid}/fd/${fd}`).match(/^socket:\[(\d+)\]$/);
        if (m && inodes.has(m[1]!)) return pid;
      } catch {
        /* closed meanwhile */
      }
    }
  }
  return null;
}

const DIST_DIR = '.next-e2e';

/**
 * One browser session per stream, made in this process by the service calls behind the door, so
 * the web server's memory holds only the streams: POST /auth/token's issueSession + issueLoginCode,
 * then GET /login's redeemLoginCode, whose token is the `session` cookie a browser would get.
 */
async function mintSessions(who: { businessId: number; staffId: number }[], concurrency = 8): Promise<string[]> {
  const { issueSession, issueLoginCode, redeemLoginCode } = await import('@/server/services/auth');
  const { db } = await import('@/server/db/client');
  const cookies: string[] = new Array(who.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < who.length) {
        const i = next++;
        const { businessId, staffId } = who[i]!;
        const code = await db.transaction(async (tx) => {
          const session = await issueSession(
            { kind: 'platform', scope: 'platform:bench' },
            { business_id: businessId, staff_id: staffId },
            tx,
          );
          return issueLoginCode(session.id, undefined, tx);
        });
        const browser = await redeemLoginCode(code);
        if (!browser) throw new Error('a fresh login code was refused');
        cookies[i] = browser.token;
      }
    }),
  );
  return cookies;
}

// -------------------------------------------------------------------------------------------------
// Main process.

type Reader = ReturnType<typeof startReader>;
const startReader = () => forkChild<ToReader, FromReader>('e2e/bench/events.ts', '--reader');

type RunResult = {
  expected: number;
  delivered: number;
  missing: number;
  missingStreams: number;
  duplicates: number;
  foreign: number;
  published: number;
  publishErrors: number;
  behindMs: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  webCpu: number;
  pgCpu: number;
  readerCpu: number;
  readerLoopP99: number;
  rssAfterMb: number;
  /** Deliveries per second from the first publish to the last arrival. */
  throughput: number;
  /** From the last publish to the last arrival. */
  drainS: number;
  /** The longest time in which no stream received anything, between the first publish and the last arrival. */
  maxGapMs: number;
  /** GET /api/v1/health/live every 200 ms while publishing and draining: p50 and max, ms. */
  healthP50: number;
  healthMax: number;
};

async function main() {
  const STREAMS = flag('streams', 2000);
  const RATE = flag('rate', 50);
  const SECONDS = flag('seconds', 30);
  const REPEAT = (await import('./harness')).repeatCount();
  const BUSINESSES = Math.min(flag('businesses', 20), STREAMS);
  const READERS = flag('readers', 2);
  const IDLE_S = flag('idle', 10);
  // --presence (`npm run bench:presence`): every stream is a staff member of their own, who also beats
  // presence on a conversation of their own every --beat-s seconds (presence-beats.ts).
  const PRESENCE = process.argv.includes('--presence');
  const BEAT_S = flag('beat-s', 15);
  const CHURN = Math.min(1, flag('churn', 0.2));
  const STAFF = PRESENCE ? Math.ceil(STREAMS / BUSINESSES) : 5;
  // A browser's EventSource sends its usual Accept-Encoding; `--accept-encoding identity` asks for none.
  const ACCEPT_ENCODING = (() => {
    const i = process.argv.indexOf('--accept-encoding');
    return i >= 0 ? process.argv[i + 1]! : 'gzip, deflate, br, zstd';
  })();
  const PLATFORM_KEY = 'bench-platform-key-0123456789';

  const { benchDatabase, fmt, median, percentile, printFigures, printSummary, sleep, stopChild, waitUntil } =
    await import('./harness');
  type Figure = import('./harness').Figure;
  const { closeDb } = await import('@/server/db/client');
  const { createSql } = await import('@/db/connect');
  const { freePort } = await import('@/db/embedded');
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const { ensureProductionBuild } = await import('@/server/cli/production-build');
  const { recordEvents } = await import('@/server/services/events/record');
  type Tx = import('@/server/db/client').Tx;
  /** One event in the log, in a transaction of its own, as a change appends it. */
  const publish = async (businessId: number, s: Stamp | { probe: number }, db: Tx): Promise<void> => {
    if ('probe' in s) {
      await recordEvents(
        [
          {
            type: 'conversation.woke',
            businessId,
            conversationId: s.probe,
            actor: { type: 'system' },
            data: { conversation_id: s.probe },
          },
        ],
        db,
      );
      return;
    }
    const { conversationId, messageId } = stampIds(s);
    await recordEvents(
      [
        {
          type: 'message.created',
          businessId,
          conversationId,
          messageId,
          actor: { type: 'system' },
          data: {
            message_id: messageId,
            conversation_id: conversationId,
            client_id: null,
            channel: 'sms',
            message_type: 'TEXT',
            direction: 'outbound',
            status: 'queued',
            send_at: null,
          },
        },
      ],
      db,
    );
  };

  console.log(
    `bench:events on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}): ${STREAMS} streams over ${BUSINESSES} businesses, ` +
      `${RATE} events/s for ${SECONDS} s × ${REPEAT}, ${READERS} reader processes` +
      (PRESENCE ? `; ${STREAMS} staff beating presence every ${BEAT_S} s (${fmt(CHURN * 100, 0)}% of beats a change)` : ''),
  );
  const failures: string[] = [];
  const database = await benchDatabase();
  const sql = createSql(database.url, { max: 2 });
  const children: ChildProcess[] = [];
  let web: ChildProcess | undefined;
  const cleanup = async () => {
    for (const c of children) if (c.exitCode === null) c.kill();
    if (web) await stopChild(web);
    await sql.end({ timeout: 1 });
    await closeDb();
    await database.stop();
  };

  try {
    // ---- seed: businesses and staff (sessions below)
    const businesses = await sql<{ id: number }[]>`
      insert into businesses (name) select 'Events Bench ' || g from generate_series(1, ${BUSINESSES}) g order by g returning id`;
    const businessIds = businesses.map((b) => b.id).sort((a, b) => a - b);
    const staffRows = await sql<{ id: number; business_id: number }[]>`
      insert into staff (business_id, name, role)
      select b, 'Staff ' || g || ' of ' || b, case when g = 1 then 'owner' else 'staff' end
      from unnest(${sql.array(businessIds)}::int[]) b cross join generate_series(1, ${STAFF}) g
      returning id, business_id`;
    const staffOf = new Map<number, number[]>();
    for (const r of staffRows)
      staffOf.set(
        r.business_id,
        [...(staffOf.get(r.business_id) ?? []), r.id].sort((a, b) => a - b),
      );
    // --presence: a client and a conversation for each staff member, the one they beat on.
    const conversationOf = new Map<number, number>();
    if (PRESENCE) {
      const clientRows = await sql<{ id: number; business_id: number; external_id: string }[]>`
        insert into clients (business_id, name, external_id, client_type)
        select business_id, 'Bench client ' || id, 'bench-staff-' || id, 'returning'
        from staff where business_id = any(${sql.array(businessIds)}::int[])
        returning id, business_id, external_id`;
      const conversationRows = await sql<{ id: number; client_id: number }[]>`
        insert into conversations (business_id, client_id)
        select * from unnest(${sql.array(clientRows.map((c) => c.business_id))}::int[], ${sql.array(clientRows.map((c) => c.id))}::int[])
        returning id, client_id`;
      const staffOfClient = new Map(clientRows.map((c) => [c.id, Number(c.external_id.slice('bench-staff-'.length))]));
      for (const c of conversationRows) conversationOf.set(staffOfClient.get(c.client_id)!, c.id);
    }

    // ---- the production server
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const serverEnv: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'production',
      NEXT_DIST_DIR: DIST_DIR,
      PORT: String(port),
      DATABASE_URL: database.url,
      PUBLIC_BASE_URL: base,
      PLATFORM_API_KEY: PLATFORM_KEY,
      SESSION_SECRET: 'bench-session-secret-0123456789',
      LOG_LEVEL: 'warn',
      // Every stream of a business is on this one process: room for all of them (and the warm-up
      // stream) under the per-business cap, whatever --streams and --businesses say.
      EVENT_STREAMS_PER_BUSINESS:
        process.env.EVENT_STREAMS_PER_BUSINESS ?? String(Math.min(100_000, Math.max(200, 2 * Math.ceil(STREAMS / BUSINESSES)))),
    };
    // This process mints the sessions with the services (mintSessions): the same database and secret.
    process.env.DATABASE_URL = database.url;
    process.env.SESSION_SECRET = serverEnv.SESSION_SECRET;
    // The build the browser tests and the fuzzer use, rebuilt (under their lock) when older than the sources.
    let build = 'reused (BENCH_SKIP_BUILD=1)';
    if (!process.env.BENCH_SKIP_BUILD) {
      const t0 = performance.now();
      await ensureProductionBuild(DIST_DIR, {
        env: serverEnv,
        force: Boolean(process.env.BENCH_BUILD),
        log: (line) => console.log(line),
      });
      build = `${DIST_DIR} checked/built in ${fmt((performance.now() - t0) / 1000, 0)} s`;
    }
    // The production web server as `npm start` runs it (server/cli/web-server.ts: Next.js's handler in
    // a plain Node server), directly under node, so the spawned process is the one that serves.
    // BENCH_WEB_NODE_ARGS adds node flags (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, refused in NODE_OPTIONS).
    const nodeArgs = process.env.BENCH_WEB_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
    const spawnedAt = performance.now();
    /** With BENCH_DEBUG, phases stamped in seconds since the server was spawned (a --cpu-prof's clock). */
    const phase = (what: string) =>
      process.env.BENCH_DEBUG && console.log(`  [server t+${fmt((performance.now() - spawnedAt) / 1000)} s] ${what}`);
    web = spawn(
      process.execPath,
      [...nodeArgs, '--import', 'tsx', 'server/cli/web-server.ts', '--port', String(port), '--hostname', '127.0.0.1'],
      {
        env: serverEnv,
        // BENCH_WEB_LOG=file keeps the server's stdout and stderr (e.g. with BENCH_WEB_NODE_ARGS=--trace-gc).
        stdio: [
          'ignore',
          process.env.BENCH_WEB_LOG ? openSync(process.env.BENCH_WEB_LOG, 'a') : 'ignore',
          process.env.BENCH_WEB_LOG ? openSync(process.env.BENCH_WEB_LOG, 'a') : 'inherit',
        ],
      },
    );
    const up = await waitUntil(
      async () =>
        fetch(`${base}/api/v1/health/live`).then(
          (r) => r.ok,
          () => false,
        ),
      60_000,
      200,
    );
    if (!up) throw new Error('the production server did not start within 60 s');
    const pid = listeningPid(web.pid!, port);
    if (!pid) throw new Error(`no process listens on port ${port}`);
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    console.log(
      `web server: pid ${pid} (${pid === web.pid ? 'the spawned process' : `child of ${parentOf(pid)}`}): ${cmd.slice(0, 100)}`,
    );

    // PostgreSQL: the postmaster is the parent of our backend; its children are all of PostgreSQL.
    const [{ pid: backend }] = (await sql`select pg_backend_pid() as pid`) as unknown as [{ pid: number }];
    const postmaster = parentOf(backend);
    // Backends come and go (pool idle timeouts): the postmaster's cutime/cstime keeps the exited ones.
    const pgCpuMs = () =>
      descendants(postmaster).reduce((sum, p) => {
        try {
          return sum + cpuMsOf(p, p === postmaster);
        } catch {
          return sum; // exited meanwhile
        }
      }, 0);
    const xacts = async () =>
      Number(
        (
          (await sql`select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()`) as unknown as [
            { n: string },
          ]
        )[0].n,
      );
    /** Web and PostgreSQL CPU (% of one core) and PostgreSQL transactions/s over `ms`. */
    const sample = async (ms: number) => {
      const [w0, p0, x0, t0] = [cpuMsOf(pid), pgCpuMs(), await xacts(), performance.now()];
      await sleep(ms);
      await sql`select pg_stat_force_next_flush()`.catch(() => {});
      await sleep(600); // pg_stat_database is flushed by each backend about once a second
      const [w1, p1, x1, t1] = [cpuMsOf(pid), pgCpuMs(), await xacts(), performance.now()];
      const wall = t1 - t0;
      return { web: (100 * (w1 - w0)) / wall, pg: (100 * (p1 - p0)) / wall, xactPerS: ((x1 - x0) * 1000) / wall };
    };

    // ---- sessions: one browser session per stream, round-robin over businesses, then staff
    const who = Array.from({ length: STREAMS }, (_, i) => {
      const businessId = businessIds[i % BUSINESSES]!;
      const staff = staffOf.get(businessId)!;
      return { businessId, staffId: staff[Math.floor(i / BUSINESSES) % staff.length]! };
    });
    let t = performance.now();
    const cookies = await mintSessions(who);
    const mintS = (performance.now() - t) / 1000;

    // ---- warm the tRPC door and the LISTEN hub with one stream, then the baseline
    const specs: StreamSpec[] = who.map((w, idx) => ({
      idx,
      cookie: cookies[idx]!,
      businessId: w.businessId,
      staffId: w.staffId,
    }));
    const db = drizzle(sql) as unknown as Tx;
    let probe = 0;
    let lastStatuses: Status[] = [];
    const publishProbe = async () => {
      probe++;
      for (const businessId of businessIds) {
        await publish(businessId, { probe }, db);
      }
    };
    const awaitProbe = async (readers: Reader[], expect: number, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        // One probe per business per round, a round every 2 s: far below the measured rate.
        await publishProbe();
        await sleep(2000);
        const statuses = await Promise.all(readers.map((r) => r.ask<Status>({ cmd: 'status', probe }, 'status')));
        lastStatuses = statuses;
        const probed = statuses.reduce((s, x) => s + x.probed, 0);
        if (probed >= expect || Date.now() > deadline) {
          if (process.env.BENCH_DEBUG)
            console.log(
              'readers:',
              JSON.stringify(
                statuses.map((s) => ({ open: s.open, probed: s.probed, bytes: s.bytes, kinds: s.kinds, encodings: s.encodings })),
              ),
            );
          return { probed, ended: statuses.flatMap((s) => s.ended) };
        }
      }
    };
    {
      const warm = startReader();
      children.push(warm.child);
      const opened = await warm.ask<Opened>(
        { cmd: 'open', base, streams: specs.slice(0, 1), concurrency: 1, acceptEncoding: ACCEPT_ENCODING },
        'opened',
      );
      if (opened.failures.length) throw new Error(`the first stream did not connect: ${opened.failures[0]!.reason}`);
      const { probed } = await awaitProbe([warm], 1, 15_000);
      if (probed < 1) throw new Error('the first stream never received an event');
      warm.child.send({ cmd: 'close' });
      await new Promise((r) => warm.child.once('exit', r));
      children.pop();
    }
    await sleep(2000);
    const rssBaseline = statusKb(pid, 'VmRSS') / 1024;
    const idleBefore = await sample(5000);
    const rssBefore = statusKb(pid, 'VmRSS') / 1024;

    // ---- open all streams
    phase('opening the streams');
    const readers = Array.from({ length: Math.min(READERS, STREAMS) }, startReader);
    for (const r of readers) children.push(r.child);
    t = performance.now();
    const openedAll = await Promise.all(
      readers.map((r, k) =>
        r.ask<Opened>(
          {
            cmd: 'open',
            base,
            streams: specs.filter((s) => s.idx % readers.length === k),
            concurrency: 64,
            acceptEncoding: ACCEPT_ENCODING,
          },
          'opened',
        ),
      ),
    );
    const connectedS = (performance.now() - t) / 1000;
    const connectMs = openedAll.flatMap((o) => o.connectMs);
    const connectFailures = openedAll.flatMap((o) => o.failures);
    if (connectFailures.length)
      failures.push(`${connectFailures.length} streams did not connect (first: ${connectFailures[0]!.reason})`);
    const ready = await awaitProbe(readers, connectMs.length, 30_000);
    const readyS = (performance.now() - t) / 1000;
    if (ready.probed < STREAMS) failures.push(`${STREAMS - ready.probed} of ${STREAMS} streams never received the probe event`);
    await sleep(2000);
    const rssAfter = statusKb(pid, 'VmRSS') / 1024;
    // ---- --presence: every staff member beats from now on, through the idle phase and the runs
    let beater: ReturnType<typeof startBeater> | undefined;
    let rssWithPresence = NaN;
    let beatsSince = 0;
    if (PRESENCE) {
      phase('staff start beating');
      beater = startBeater();
      children.push(beater.child);
      const staff = specs.map((s) => ({ idx: s.idx, cookie: s.cookie, conversationId: conversationOf.get(s.staffId)! }));
      await beater.ask({ cmd: 'start', base, staff, intervalMs: BEAT_S * 1000, churn: CHURN }, 'started');
      // One whole interval: everyone has beaten once, and is present on every other stream of their business.
      await sleep(BEAT_S * 1000 + 2000);
      const warm = await beater.ask<BeatStats>({ cmd: 'stats' }, 'stats');
      if (warm.failed) failures.push(`${warm.failed} of ${warm.sent} first beats failed (first: ${warm.firstFailure})`);
      beatsSince = performance.now();
      rssWithPresence = statusKb(pid, 'VmRSS') / 1024;
    }
    phase('all streams ready; idle');
    const idleWith = await sample(IDLE_S * 1000);
    const rssAfterIdle = statusKb(pid, 'VmRSS') / 1024;

    // ---- publish phases
    const events = Math.round(RATE * SECONDS);
    const streamsOf = new Map<number, number>();
    for (const s of specs) streamsOf.set(s.businessId, (streamsOf.get(s.businessId) ?? 0) + 1);
    const businessOfStream = new Map(specs.map((s) => [s.idx, s.businessId]));
    const runs: RunResult[] = [];
    const runFigures: Figure[][] = [];
    for (let run = 1; run <= REPEAT; run++) {
      await Promise.all(readers.map((r) => r.ask<Count>({ cmd: 'run', run }, 'count')));
      const perBusiness = new Map<number, number>();
      let publishErrors = 0;
      let behindMs = 0;
      const pending: Promise<void>[] = [];
      const [w0, p0] = [cpuMsOf(pid), pgCpuMs()];
      phase(`run ${run}: publishing`);
      // The server's responsiveness meanwhile: its cheapest route, one request at a time.
      const health: number[] = [];
      let pinging = true;
      const pinger = (async () => {
        while (pinging) {
          const started = performance.now();
          await fetch(`${base}/api/v1/health/live`).then(
            (r) => r.arrayBuffer(),
            () => undefined,
          );
          health.push(performance.now() - started);
          await sleep(200);
        }
      })();
      const t0 = performance.now();
      const t0Epoch = now();
      for (let seq = 0; seq < events; seq++) {
        const due = t0 + (seq * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        else behindMs = Math.max(behindMs, -wait);
        const businessId = businessIds[seq % BUSINESSES]!;
        perBusiness.set(businessId, (perBusiness.get(businessId) ?? 0) + 1);
        pending.push(
          publish(businessId, { run, seq, sentAt: now() }, db).catch(() => {
            publishErrors++;
            perBusiness.set(businessId, perBusiness.get(businessId)! - 1);
          }),
        );
      }
      await Promise.all(pending);
      const publishWall = performance.now() - t0;
      phase(`run ${run}: published; draining`);
      const publishedAt = now();
      const [w1, p1] = [cpuMsOf(pid), pgCpuMs()];
      const expected = [...perBusiness].reduce((sum, [b, n]) => sum + n * (streamsOf.get(b) ?? 0), 0);
      // Drain: until everything arrived, or nothing more arrived for 60 s (a saturated server delivers
      // in bursts, see maxGapMs), at most 300 s; what has not arrived then counts as lost.
      let last = -1;
      let quietSince = Date.now();
      for (;;) {
        const got = (await Promise.all(readers.map((r) => r.ask<Count>({ cmd: 'count', run }, 'count')))).reduce(
          (s, c) => s + c.received,
          0,
        );
        if (got >= expected) break;
        if (got !== last) {
          last = got;
          quietSince = Date.now();
        } else if (Date.now() - quietSince > 60_000 || performance.now() - t0 - publishWall > 300_000) break;
        await sleep(200);
      }
      phase(`run ${run}: drained (or gave up)`);
      const collected = await Promise.all(readers.map((r) => r.ask<Collected>({ cmd: 'collect', run }, 'collected')));
      const latencies = collected.flatMap((c) => c.latencies);
      const lastAt = Math.max(...collected.map((c) => c.lastAt));
      pinging = false;
      await pinger;
      const arrivals = [t0Epoch, ...collected.flatMap((c) => c.arrivals)].sort((a, b) => a - b);
      let maxGapMs = 0;
      for (let i = 1; i < arrivals.length; i++) maxGapMs = Math.max(maxGapMs, arrivals[i]! - arrivals[i - 1]!);
      let missing = 0;
      let missingStreams = 0;
      for (const c of collected) {
        for (const [idx, got] of c.receivedByStream) {
          const want = perBusiness.get(businessOfStream.get(idx)!) ?? 0;
          if (got < want) {
            missing += want - got;
            missingStreams++;
          }
        }
      }
      const result: RunResult = {
        expected,
        delivered: latencies.length,
        missing,
        missingStreams,
        duplicates: collected.reduce((s, c) => s + c.duplicates, 0),
        foreign: collected.reduce((s, c) => s + c.foreign, 0),
        published: events - publishErrors,
        publishErrors,
        behindMs,
        p50: percentile(latencies, 50),
        p95: percentile(latencies, 95),
        p99: percentile(latencies, 99),
        max: latencies.reduce((m, x) => Math.max(m, x), 0),
        webCpu: (100 * (w1 - w0)) / publishWall,
        pgCpu: (100 * (p1 - p0)) / publishWall,
        readerCpu: collected.reduce((s, c) => s + (100 * c.cpuMs) / c.wallMs, 0),
        readerLoopP99: Math.max(...collected.map((c) => c.loopP99Ms)),
        rssAfterMb: statusKb(pid, 'VmRSS') / 1024,
        throughput: lastAt > 0 ? (latencies.length * 1000) / (lastAt - t0Epoch) : 0,
        drainS: lastAt > 0 ? Math.max(0, lastAt - publishedAt) / 1000 : NaN,
        maxGapMs,
        healthP50: percentile(health, 50),
        healthMax: Math.max(...health),
      };
      runs.push(result);
      runFigures.push([
        {
          name: 'deliveries/s sustained',
          value: result.throughput,
          unit: '/s',
          digits: 0,
          // The ceiling: what was offered (every event to every stream of its business), not measured.
          ceiling: { name: 'offered', value: (result.expected * 1000) / Math.max(1, publishWall) },
        },
        {
          name: 'delivery latency p95',
          value: result.p95,
          unit: 'ms',
          lowerIsBetter: true,
          target: '≤ 250 ms',
          ok: result.p95 <= 250,
        },
        {
          name: 'missing + duplicate deliveries',
          value: result.missing + result.duplicates,
          unit: '',
          digits: 0,
          target: '0',
          ok: result.missing + result.duplicates === 0,
        },
      ]);
      printFigures(`bench:events, run ${run} of ${REPEAT}`, runFigures.at(-1)!);
      console.log(
        `  run ${run}/${REPEAT}: delivered ${result.delivered}/${result.expected} (missing ${result.missing} on ${result.missingStreams} streams, duplicates ${result.duplicates}), ` +
          `latency p50 ${fmt(result.p50)} p95 ${fmt(result.p95)} p99 ${fmt(result.p99)} max ${fmt(result.max)} ms; web CPU ${fmt(result.webCpu, 0)}%, PostgreSQL ${fmt(result.pgCpu, 0)}%, readers ${fmt(result.readerCpu, 0)}%`,
      );
      if (result.missing) failures.push(`run ${run}: ${result.missing} deliveries missing on ${result.missingStreams} streams`);
      if (result.duplicates) failures.push(`run ${run}: ${result.duplicates} duplicate deliveries`);
      if (result.foreign) failures.push(`run ${run}: ${result.foreign} events of another business reached a stream`);
      if (result.publishErrors) failures.push(`run ${run}: ${result.publishErrors} events failed to append`);
    }
    // ---- --presence: the beats meanwhile, then one staff member per business stops beating (a closed
    // tab): how long after their last beat was answered their colleagues' streams show them gone.
    let beats: BeatStats | undefined;
    let beatsPerS = NaN;
    const expiryS: number[] = [];
    let notExpired = 0;
    if (beater) {
      beats = await beater.ask<BeatStats>({ cmd: 'stats' }, 'stats');
      beatsPerS = (beats.sent * 1000) / (performance.now() - beatsSince);
      if (beats.failed) failures.push(`${beats.failed} of ${beats.sent} beats failed (first: ${beats.firstFailure})`);
      phase('presence: some staff stop beating');
      const leaving = businessIds.map((b) => specs.find((s) => s.businessId === b)!);
      const watch = leaving.map((s) => ({
        businessId: s.businessId,
        conversationId: conversationOf.get(s.staffId)!,
        staffId: s.staffId,
      }));
      await Promise.all(readers.map((r) => r.ask({ cmd: 'watch', watch }, 'watching')));
      const stopped = await beater.ask<Stopped>({ cmd: 'stop', idxs: leaving.map((s) => s.idx) }, 'stopped');
      const lastBeatAt = new Map(stopped.lastBeatAt);
      const keyOf = (s: StreamSpec) => `${s.businessId},${conversationOf.get(s.staffId)},${s.staffId}`;
      const goneAt = new Map<string, number>();
      const deadline = Date.now() + 60_000;
      while (goneAt.size < leaving.length && Date.now() < deadline) {
        await sleep(1000);
        for (const g of await Promise.all(readers.map((r) => r.ask<Gone>({ cmd: 'gone' }, 'gone'))))
          for (const [key, at] of g.at) if (at && (!goneAt.has(key) || at < goneAt.get(key)!)) goneAt.set(key, at);
      }
      for (const s of leaving) {
        const at = goneAt.get(keyOf(s));
        if (at) expiryS.push((at - lastBeatAt.get(s.idx)!) / 1000);
        else notExpired++;
      }
      if (notExpired) failures.push(`${notExpired} of ${leaving.length} staff who stopped beating were still shown 60 s later`);
      beater.child.send({ cmd: 'close' });
    }
    const end = await Promise.all(readers.map((r) => r.ask<Status>({ cmd: 'status', probe }, 'status')));
    const ended = end.flatMap((s) => s.ended).filter((e) => !connectFailures.some((f) => f.idx === e.idx));
    if (ended.length) failures.push(`${ended.length} streams ended during the run (first: ${ended[0]!.reason})`);
    const rssPeak = statusKb(pid, 'VmHWM') / 1024;

    // ---- the table
    const mid = (pick: (r: RunResult) => number, digits = 1) => {
      const v = runs.map(pick);
      return REPEAT > 1
        ? `${fmt(median(v), digits)} (${fmt(Math.min(...v), digits)}–${fmt(Math.max(...v), digits)})`
        : fmt(v[0]!, digits);
    };
    const row = (label: string, value: string, target = '') => console.log(`  ${label.padEnd(46)} ${value.padEnd(34)} ${target}`);
    const delivered = runs.reduce((s, r) => s + r.delivered, 0);
    const expected = runs.reduce((s, r) => s + r.expected, 0);
    console.log(
      `\nresults (${STREAMS} streams, ${BUSINESSES} businesses × ${STAFF} staff, ${RATE} events/s × ${SECONDS} s × ${REPEAT}; build ${build}; sessions minted in ${fmt(mintS)} s)`,
    );
    row('figure', REPEAT > 1 ? `measured: median (min–max of ${REPEAT})` : 'measured', 'target');
    row('streams connected / ready (probe received)', `${connectMs.length} / ${ready.probed} of ${STREAMS}`, `all ${STREAMS}`);
    const encodings = new Map<string, number>();
    for (const st of lastStatuses)
      for (const [k, n] of Object.entries(st.encodings)) encodings.set(k, (encodings.get(k) ?? 0) + n);
    row(
      'response Content-Encoding (Accept-Encoding sent)',
      `${[...encodings].map(([k, n]) => `${k} ×${n}`).join(', ')} (${ACCEPT_ENCODING})`,
      '',
    );
    row('connect time, all streams (to ready)', `${fmt(connectedS)} s (${fmt(readyS)} s)`, '—');
    row(
      '  per stream to `connected`: p50 / p95 / max',
      `${fmt(median(connectMs), 0)} / ${fmt(percentile(connectMs, 95), 0)} / ${fmt(Math.max(...connectMs), 0)} ms`,
      '—',
    );
    row('web RSS before the streams (warmed by one)', `${fmt(rssBefore, 0)} MB (5 s earlier: ${fmt(rssBaseline, 0)} MB)`, '—');
    row(
      `web RSS with ${STREAMS} streams`,
      `${fmt(rssAfter, 0)} MB (after ${IDLE_S} s idle: ${fmt(rssAfterIdle, 0)})`,
      '< 300 MB total',
    );
    row(
      'memory per stream (RSS after − before)/streams',
      `${fmt(((rssAfter - rssBefore) * 1024) / STREAMS, 1)} KB`,
      rssBefore < 300 ? `≤ ${fmt(((300 - rssBefore) * 1024) / STREAMS, 0)} KB fits 300 MB` : 'over 300 MB before any stream',
    );
    row('web RSS after publishing / peak (VmHWM)', `${mid((r) => r.rssAfterMb, 0)} MB / ${fmt(rssPeak, 0)} MB`, '< 300 MB');
    row('delivery latency p50', `${mid((r) => r.p50)} ms`, '—');
    row('delivery latency p95', `${mid((r) => r.p95)} ms`, '≤ 250 ms');
    row('delivery latency p99', `${mid((r) => r.p99)} ms`, '—');
    row('delivery latency max', `${mid((r) => r.max)} ms`, '—');
    row(
      'deliveries/s sustained (first publish → last arrival)',
      `${mid((r) => r.throughput, 0)}/s`,
      `${fmt(RATE * (STREAMS / BUSINESSES), 0)}/s offered`,
    );
    row('backlog: last arrival after the last publish', `${mid((r) => r.drainS)} s`, '≈ 0');
    row('longest pause with no delivery to any stream', `${mid((r) => r.maxGapMs, 0)} ms`, '≈ 1000/rate');
    row(
      'GET /health/live meanwhile: p50 / max',
      `${mid((r) => r.healthP50)} / ${mid((r) => r.healthMax, 0)} ms`,
      'the event loop',
    );
    row('delivered / expected (all runs)', `${delivered} / ${expected}`, 'all, 0 missing');
    row(
      'missing / duplicate / other-business',
      `${runs.reduce((s, r) => s + r.missing, 0)} / ${runs.reduce((s, r) => s + r.duplicates, 0)} / ${runs.reduce((s, r) => s + r.foreign, 0)}`,
      '0 / 0 / 0',
    );
    row(
      'publisher: events sent, worst lag behind plan',
      `${runs.reduce((s, r) => s + r.published, 0)}, ${mid((r) => r.behindMs)} ms`,
      `${events * REPEAT} at ${RATE}/s`,
    );
    row(
      'CPU idle, no streams: web / PostgreSQL',
      `${fmt(idleBefore.web, 0)}% / ${fmt(idleBefore.pg, 0)}% (${fmt(idleBefore.xactPerS, 0)} xact/s)`,
      '% of one core',
    );
    row(
      `CPU idle, ${STREAMS} streams: web / PostgreSQL`,
      `${fmt(idleWith.web, 0)}% / ${fmt(idleWith.pg, 0)}% (${fmt(idleWith.xactPerS, 0)} xact/s)`,
      'session re-check every 5 s',
    );
    row('CPU publishing: web / PostgreSQL', `${mid((r) => r.webCpu, 0)}% / ${mid((r) => r.pgCpu, 0)}%`, '');
    row(
      `bench readers (${readers.length} processes): CPU / loop p99`,
      `${mid((r) => r.readerCpu, 0)}% / ${mid((r) => r.readerLoopP99)} ms`,
      'the client side',
    );
    if (beats) {
      const frames = end.reduce((sum, st) => sum + st.presenceFrames, 0);
      row(
        'presence: staff beating, beats/s measured',
        `${STREAMS} every ${BEAT_S} s, ${fmt(beatsPerS, 0)}/s (${fmt(CHURN * 100, 0)}% changes)`,
        `${fmt(STREAMS / BEAT_S, 0)}/s planned`,
      );
      row(
        '  beat answered: p50 / p95 / max',
        `${fmt(median(beats.latencies), 0)} / ${fmt(percentile(beats.latencies, 95), 0)} / ${fmt(Math.max(...beats.latencies), 0)} ms`,
        `${beats.failed} failed of ${beats.sent}`,
      );
      row('  presence frames received (all streams)', `${frames}`, 'changes × colleagues');
      row(`web RSS with ${STREAMS} streams and beating staff`, `${fmt(rssWithPresence, 0)} MB`, '< 300 MB');
      row(
        `  expiry after the last beat: p50 / max (${expiryS.length} staff)`,
        `${fmt(median(expiryS))} / ${fmt(Math.max(...expiryS))} s`,
        '≤ 35 s',
      );
    }
    if (REPEAT > 1) printSummary(runFigures, 'bench:events');
    if (failures.length) {
      console.log('\nHARD FAILURES');
      for (const f of failures) console.log(`  - ${f}`);
    }

    for (const r of readers) r.child.send({ cmd: 'close' });
    await Promise.all(
      readers.map((r) => (r.child.exitCode !== null ? undefined : new Promise((res) => r.child.once('exit', res)))),
    );
    children.length = 0;
  } finally {
    await cleanup();
  }
  process.exit(failures.length ? 1 : 0);
}

if (process.argv.includes('--reader')) reader();
else
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
