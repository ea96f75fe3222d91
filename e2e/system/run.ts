import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BALANCER_DEFAULTS, startCluster, type Cluster, type Proc } from '@/deploy/cluster';
import { freePort, startEmbeddedPostgres, type EmbeddedDb } from '@/db/embedded';
import { startFakeTwilio } from '@/server/testing/fake-twilio';
import { fakeProvidersEnv, startSmtpSink } from '@/server/testing/smtp-sink';
import { databaseUnavailable, serverErrors, startLoad, type Business } from './load';
import { RESUME_MAX_EVENTS } from '@/server/realtime/backlog';
import { businessLog, deliveryFailures, startSubscribers } from './subscribers';
import { verify, type Check } from './verify';

/**
 * `npm run test:system`: the whole product the way an operator runs it — two web processes behind
 * HAProxy, two workers, one PostgreSQL, the fake Twilio API and an SMTP sink — under mixed traffic
 * for SYSTEM_LOAD_SECONDS (120), while processes are SIGKILLed, SIGTERMed and restarted (as a
 * supervisor would) and PostgreSQL is stopped and started. Then it checks, from the outside and
 * from the database, that nothing was lost, nothing happened twice and no status moved back, prints
 * a one-screen report, and exits 1 on any failure.
 *
 * PostgreSQL: an embedded one of its own (restarted mid-run), or DATABASE_URL (not restarted: the
 * harness cannot stop a server it does not own).
 */
const LOAD_SECONDS = Number(process.env.SYSTEM_LOAD_SECONDS ?? 120);
const SUBSCRIBERS = Number(process.env.SYSTEM_SUBSCRIBERS ?? 200);
const BUSINESSES = 4;
const CLIENTS_PER_BUSINESS = 24;
const RATE_LIMIT = 1000;
const started = Date.now();
const t = () => `${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s`;
const say = (line: string) => console.log(`[system ${t()}] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const processErrors: string[] = [];
/** When the restarted PostgreSQL accepted connections again (docs/architecture.md#lost-connections). */
let postgresBackAt: number | null = null;

async function main() {
  const fake = await startFakeTwilio({ latencyMs: 5 });
  const sink = await startSmtpSink();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'messaging-system-'));
  let pg: EmbeddedDb | null = null;
  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port: await freePort() });
    databaseUrl = pg.url;
  }
  const secrets = {
    PLATFORM_API_KEY: `pk_system_${randomBytes(18).toString('base64url')}`,
    SESSION_SECRET: randomBytes(32).toString('base64url'),
    EMAIL_INBOUND_SECRET: randomBytes(16).toString('hex'),
  };
  // The harness seeds and checks through the same code (server/db/client, factories): same database, same secrets.
  Object.assign(process.env, secrets, { DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' });

  say(`starting 2 web + 2 worker processes behind HAProxy (${pg ? 'embedded PostgreSQL' : 'DATABASE_URL'})`);
  const cluster = await startCluster({
    webs: 2,
    workers: 2,
    databaseUrl,
    distDir: '.next-e2e',
    env: {
      ...secrets,
      ...fakeProvidersEnv(fake, sink),
      RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
      // Each subscriber is a session of its own (under EVENT_STREAMS_PER_SESSION); a business's
      // subscribers may all land on one web process (the other killed), with room for reconnects
      // that overlap the end of the stream they replace.
      EVENT_STREAMS_PER_BUSINESS: String(Math.min(100_000, Math.max(200, 2 * Math.ceil(SUBSCRIBERS / BUSINESSES)))),
      // Every browser session is minted through POST /auth/token: SYSTEM_SUBSCRIBERS may ask for more than the default cap.
      AUTH_TOKENS_PER_BUSINESS_PER_MINUTE: String(Math.max(60, Math.ceil(SUBSCRIBERS / BUSINESSES))),
      WORKER_MAINTENANCE_INTERVAL_SECONDS: '5',
      RECOVERY_SWEEP_INTERVAL_SECONDS: '5',
      SHUTDOWN_TIMEOUT_SECONDS: '10',
      LOG_LEVEL: 'info',
    },
    // The balancer's defaults, but the harness logs every browser in from one address (127.0.0.1)
    // within seconds: /login admits that many. Its webhooks are all validly signed, so they are
    // never counted against the failure limit.
    balancer: { loginPerMinute: Math.max(BALANCER_DEFAULTS.loginPerMinute, 2 * SUBSCRIBERS) },
    onLine: (name, line) => {
      if (process.env.SYSTEM_VERBOSE) console.log(`  ${name}| ${line}`);
      // pino error (50) and fatal (60) lines, shown in the report.
      if (/"level":(50|60)/.test(line)) processErrors.push(`${name}: ${line.slice(0, 400)}`);
    },
  });
  say(`cluster up at ${cluster.url}`);

  const { seed } = await import('./seed');
  const businesses: Business[] = await seed(cluster.url, secrets.PLATFORM_API_KEY, {
    businesses: BUSINESSES,
    clients: CLIENTS_PER_BUSINESS,
    sessions: SUBSCRIBERS,
  });
  say(`seeded ${BUSINESSES} businesses, ${BUSINESSES * CLIENTS_PER_BUSINESS} clients, ${SUBSCRIBERS} browser sessions`);

  const { createSql } = await import('@/db/connect');
  const q = createSql(databaseUrl, { max: 4 });
  const streams = startSubscribers(
    cluster.url,
    businesses.flatMap((b) => b.cookies.map((cookie) => ({ businessId: b.id, cookie }))),
  );
  for (let i = 0; i < 100 && streams.subscribers.some((s) => s.firstConnectedAt === null); i++) await sleep(100);
  say(`${streams.subscribers.filter((s) => s.firstConnectedAt !== null).length} / ${SUBSCRIBERS} event streams open`);

  const load = startLoad({
    baseUrl: cluster.url,
    businesses,
    fake,
    twilioToken: fake.authToken,
    inboundSecret: secrets.EMAIL_INBOUND_SECRET,
  });
  const inboundIds = async (businessId: number) =>
    (
      await q<
        { id: number }[]
      >`select id::int as id from messages where business_id = ${businessId} and direction = 'inbound' order by id desc limit 30`
    ).map((r) => r.id);

  // No status ever moves back: every message's rank, sampled every 2 s, never decreases (a send
  // attempt putting `sending` back to `queued` for pg-boss's backoff is the one allowed step back).
  const regressions: string[] = [];
  const lastRank = new Map<number, { rank: number; status: string }>();
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      try {
        const rows = await q<{ id: number; status: string; rank: number }[]>`
          select id::int as id, status, message_status_rank(status, message_type) as rank from messages where direction = 'outbound' and content like 'sys%'`;
        for (const r of rows) {
          const before = lastRank.get(r.id);
          if (before && r.rank < before.rank && !(before.status === 'sending' && r.status === 'queued'))
            regressions.push(`message ${r.id}: ${before.status} → ${r.status}`);
          lastRank.set(r.id, { rank: r.rank, status: r.status });
        }
      } catch {
        // PostgreSQL restarting
      }
      await sleep(2000);
    }
  })();

  load.start(inboundIds);
  say(`load running for ${LOAD_SECONDS} s`);
  const chaos = await runChaos(cluster, pg, LOAD_SECONDS);
  await load.stop();
  if (postgresBackAt !== null && databaseUnavailable.length > 0) {
    const last = Math.max(...databaseUnavailable.map((u) => u.sentAt)) - postgresBackAt;
    say(
      `${databaseUnavailable.length} answers "the database cannot be reached"; the last one's request sent ${(last / 1000).toFixed(1)} s from PostgreSQL being back`,
    );
  }
  say('load stopped; waiting for in-flight sends and webhooks to settle');
  await load.callbacks();
  // A fresh pool for what follows: a connection that sat idle through the PostgreSQL restart
  // reports the server's goodbye (57P01) on its next query.
  const qv = createSql(databaseUrl, { max: 4 });
  const settle = await settled(qv, 150_000);
  await load.callbacks();
  sampling = false;
  await sampler;
  await sleep(2500); // the last events reach the streams
  streams.stop();
  const streamsStoppedAt = Date.now();
  // The businesses' logs as the streams last saw them (the checks below append more).
  const logs = new Map(await Promise.all(businesses.map(async (b) => [b.id, await businessLog(qv, b.id)] as const)));

  say('checking');
  const checks: Check[] = await verify({
    q: qv,
    cluster,
    log: load.log,
    fake,
    sink,
    businesses,
    platformKey: secrets.PLATFORM_API_KEY,
    rateLimit: RATE_LIMIT,
  });
  checks.push({ name: 'no status moved backwards (sampled every 2 s)', failures: regressions });
  checks.push({ name: 'the service never answered 500 (503 while PostgreSQL was down is expected)', failures: serverErrors });
  const back = postgresBackAt;
  checks.push({
    name: 'no request sent once PostgreSQL was back answered 503',
    failures:
      back === null
        ? []
        : databaseUnavailable
            .filter((u) => u.sentAt >= back)
            .map((u) => `${u.what} sent ${((u.sentAt - back) / 1000).toFixed(1)} s after PostgreSQL was back`),
  });
  const undelivered = streams.subscribers.flatMap((s, i) =>
    deliveryFailures(s, logs.get(s.businessId)!, streamsStoppedAt, RESUME_MAX_EVENTS).map(
      (f) => `stream ${i} (business ${s.businessId}): ${f}`,
    ),
  );
  const logged = [...logs.values()].reduce((n, l) => n + l.length, 0);
  checks.push({
    name: `every subscriber received every event of its business, in order, exactly once after resume (${logged} events)`,
    failures: undelivered,
  });
  const unconnected = streams.subscribers.filter((s) => s.firstConnectedAt === null).length;
  checks.push({ name: 'every stream connected', failures: unconnected ? [`${unconnected} streams never connected`] : [] });
  checks.push({
    name: 'every in-flight message settled',
    failures: settle.stuck.map((s) => `message ${s.id} still ${s.status}`),
  });

  report({ load, chaos, checks, streams: streams.subscribers, settleMs: settle.ms });
  await q.end({ timeout: 2 });
  await qv.end({ timeout: 2 });
  const procs = [...cluster.webs, ...cluster.workers];
  const diedEarly = procs.filter((p) => !p.alive());
  const exits = await cluster.stop();
  const unclean = exits.filter((e) => e.exit.code !== 0 && e.name !== 'haproxy');
  for (const e of unclean) {
    const proc = procs.find((p) => p.name === e.name);
    console.log(
      `  ${e.name} did not stop cleanly (${e.exit.code ?? e.exit.signal})${proc && diedEarly.includes(proc) ? ', and had exited before the stop' : ''}; its last lines:`,
    );
    for (const line of (proc?.output() ?? '').trim().split('\n').slice(-12)) console.log(`    ${line.slice(0, 300)}`);
  }
  await pg?.stop();
  await fake.close();
  await sink.close();
  rmSync(dir, { recursive: true, force: true });
  const failed = checks.some((c) => c.failures.length > 0);
  console.log(failed ? '\nSYSTEM TEST FAILED' : '\nSYSTEM TEST PASSED');
  process.exit(failed ? 1 : 0);
}

type ChaosEvent = { at: number; what: string; recoveredMs: number };

/** The supervisor's bad day: kills, a graceful restart and a database restart, at jittered times. */
async function runChaos(cluster: Cluster, pg: EmbeddedDb | null, seconds: number): Promise<ChaosEvent[]> {
  const events: ChaosEvent[] = [];
  const loadStart = Date.now();
  const at = (fraction: number) =>
    sleep(Math.max(0, loadStart + fraction * seconds * 1000 + (Math.random() - 0.5) * 4000 - Date.now()));
  const restart = async (proc: Proc, signal: NodeJS.Signals, what: string) => {
    const t0 = Date.now();
    cluster.kill(proc, signal);
    say(`${what}`);
    await proc.exited;
    await cluster.restart(proc);
    events.push({ at: t0 - loadStart, what, recoveredMs: Date.now() - t0 });
    say(`${proc.name} back after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  };
  const pickOf = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;

  await at(0.15);
  await restart(pickOf(cluster.webs), 'SIGKILL', 'SIGKILL a web process');
  await at(0.3);
  await restart(pickOf(cluster.workers), 'SIGKILL', 'SIGKILL a worker');
  await at(0.45);
  await restart(pickOf(cluster.webs), 'SIGTERM', 'SIGTERM a web process (graceful), then start it again');
  if (pg) {
    await at(0.6);
    const t0 = Date.now();
    say('stopping PostgreSQL for 5 s');
    await pg.pg.stop();
    await sleep(5000);
    await pg.pg.start();
    postgresBackAt = Date.now();
    // Recovered when a write goes through the balancer again.
    for (;;) {
      const res = await fetch(`${cluster.url}/api/v1/health/db`).catch(() => null);
      if (res?.ok) break;
      await sleep(200);
    }
    events.push({ at: t0 - loadStart, what: 'PostgreSQL stopped for 5 s and started', recoveredMs: Date.now() - t0 });
    say(`PostgreSQL back; the service answered health/db after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  await at(0.75);
  await Promise.all([
    restart(pickOf(cluster.webs), 'SIGKILL', 'SIGKILL a web process'),
    restart(pickOf(cluster.workers), 'SIGTERM', 'SIGTERM a worker (graceful), then start it again'),
  ]);
  await sleep(Math.max(0, loadStart + seconds * 1000 - Date.now()));
  return events;
}

/** Waits until no message of the run is `queued` or `sending` and no webhook event is left unprocessed. */
async function settled(q: ReturnType<typeof import('@/db/connect').createSql>, timeoutMs: number) {
  const t0 = Date.now();
  let stuck: { id: number; status: string }[] = [];
  while (Date.now() - t0 < timeoutMs) {
    try {
      stuck = await q<
        { id: number; status: string }[]
      >`select id::int as id, status from messages where direction = 'outbound' and content like 'sys%' and status in ('queued', 'sending')`;
      const [events] = await q<
        { n: number }[]
      >`select count(*)::int as n from webhook_events where outcome in ('pending', 'failed')`;
      if (stuck.length === 0 && events?.n === 0) break;
    } catch {
      // a connection the restart left behind; the next try gets a fresh one
    }
    await sleep(1000);
  }
  return { stuck, ms: Date.now() - t0 };
}

function report(r: {
  load: ReturnType<typeof startLoad>;
  chaos: ChaosEvent[];
  checks: Check[];
  streams: ReturnType<typeof startSubscribers>['subscribers'];
  settleMs: number;
}) {
  const { log } = r.load;
  const by = <T>(xs: T[], key: (x: T) => string) => {
    const m = new Map<string, number>();
    for (const x of xs) m.set(key(x), (m.get(key(x)) ?? 0) + 1);
    return [...m]
      .sort()
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
  };
  const sends = log.sends;
  console.log('\n──────────────── system test ────────────────');
  console.log(
    `sends          ${sends.length} requests, ${sends.reduce((s, x) => s + x.count, 0)} messages: ${by(sends, (s) => `${s.channel} ${s.keyed ? 'keyed' : 'unkeyed'}${s.cut ? ' cut' : ''} ${s.outcome}`)}`,
  );
  console.log(`               retried attempts (same key): ${sends.reduce((s, x) => s + x.attempts - 1, 0)}`);
  console.log(`notes          ${by(log.notes, (n) => `${n.keyed ? 'keyed' : 'unkeyed'} ${n.outcome}`)}`);
  console.log(`recorded       ${by(log.records, (x) => `${x.channel} ${x.outcome}`)}`);
  console.log(
    `inbound        SMS ${log.inboundSms.length} (${log.inboundSms.reduce((s, x) => s + x.deliveries, 0)} deliveries), email ${log.inboundEmail.length} (${log.inboundEmail.reduce((s, x) => s + x.deliveries, 0)} deliveries)`,
  );
  const cb = [...log.callbacks.values()];
  console.log(
    `status cbacks  ${cb.reduce((s, x) => s + x.statuses.length, 0)} for ${cb.length} messages (duplicates and out of order), acknowledged ${cb.reduce((s, x) => s + x.acked.length, 0)}`,
  );
  console.log(
    `inbox reads    ${[...log.reads]
      .sort()
      .map(([k, n]) => `${k}: ${n}`)
      .join(', ')}`,
  );
  console.log(
    `read/flag      ${[...log.marks]
      .sort()
      .map(([k, n]) => `${k}: ${n}`)
      .join(', ')}`,
  );
  console.log(
    `event streams  ${r.streams.length}, reconnects ${r.streams.reduce((s, x) => s + x.reconnects, 0)} (${r.streams.reduce((s, x) => s + x.drops, 0)} dropped by the subscriber to resume), events received ${r.streams.reduce((s, x) => s + x.received.length, 0)}, refetches ${r.streams.reduce((s, x) => s + x.refetches.length, 0)}`,
  );
  console.log('chaos');
  for (const c of r.chaos)
    console.log(
      `  +${(c.at / 1000).toFixed(1).padStart(5)} s  ${c.what.padEnd(56)} recovered in ${(c.recoveredMs / 1000).toFixed(1)} s`,
    );
  console.log(`settled        ${(r.settleMs / 1000).toFixed(1)} s after the load stopped`);
  console.log(`process errors ${processErrors.length} logged at level error or fatal`);
  for (const line of processErrors.slice(0, 8)) console.log(`  ${line}`);
  console.log('checks');
  for (const c of r.checks) {
    console.log(`  ${c.failures.length ? 'FAIL' : ' ok '}  ${c.name}${c.detail ? `  (${c.detail})` : ''}`);
    for (const f of c.failures.slice(0, 5)) console.log(`          ${f}`);
    if (c.failures.length > 5) console.log(`          … and ${c.failures.length - 5} more`);
  }
  const tally = (prefix: string) => r.checks.filter((c) => c.tally === prefix).reduce((s, c) => s + c.failures.length, 0);
  console.log(
    `lost ${tally('lost')} / duplicated ${tally('duplicated')} / regressed ${r.checks.find((c) => c.name.startsWith('no status moved'))?.failures.length ?? 0} / recorded messages sent ${r.checks.find((c) => c.name.startsWith('no recorded message'))?.failures.length ?? 0}`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
