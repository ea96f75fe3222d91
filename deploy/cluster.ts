import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { freePort } from '@/db/embedded';
import { migrateDatabase } from '@/server/migrate';
import { spawnProc, waitForOk, type Proc as ChildProc, type ProcExit } from '@/server/cli/child-process';
import { ensureProductionBuild } from '@/server/cli/production-build';
import { installCommand, systemToolPath } from '@/deploy/system-tools';

/**
 * A local deployment: migrations (once, as their own step), N web processes (`npm run start:web`
 * each, on ports of their own, bound to 127.0.0.1), M workers (`npm run start:worker`) and HAProxy
 * in front of the webs (deploy/haproxy.cfg.template). PostgreSQL is `databaseUrl`, else
 * DATABASE_URL, else the embedded one under .data/pg (as `npm run dev` uses it).
 *
 * Every process gets PUBLIC_BASE_URL = the balancer's origin (unless `env` names another public
 * origin), so Twilio webhook signatures, computed over that URL, verify behind the proxy.
 *
 * Processes run as `node --import tsx server/cli/start.ts --web|--worker`: what the npm scripts
 * run, without npm's and tsx's wrapper processes (tsx's SIGKILLs a child that does not acknowledge
 * a relayed signal almost at once). Each runs in a process group of its own: `kill(proc, signal)`
 * reaches all of it.
 */
type ProcKind = 'web' | 'worker' | 'haproxy';
export type Proc = ChildProc & { readonly kind: ProcKind; readonly port?: number };

type ClusterOptions = {
  webs?: number;
  workers?: number;
  /** PostgreSQL; default DATABASE_URL, else the embedded one (db/embedded.ts) under .data/pg. */
  databaseUrl?: string;
  /** Added to every process's environment (after the defaults below, before the cluster's own). */
  env?: Record<string, string | undefined>;
  /** The balancer's port; a free one by default. */
  port?: number;
  /** The production build the webs serve (NEXT_DIST_DIR); `.next` by default. */
  distDir?: string;
  /** Build it first when missing or older than the sources (default true); 'force': always. */
  build?: boolean | 'force';
  haproxyBin?: string;
  /** The balancer's limits (deploy/haproxy.cfg.template); BALANCER_DEFAULTS for those not given. */
  balancer?: Partial<BalancerLimits>;
  /** Each output line of each process, prefixed with its name (default: kept, not printed). */
  onLine?: (proc: string, line: string) => void;
};

export type Cluster = {
  /** The balancer's origin, e.g. http://127.0.0.1:8080: PUBLIC_BASE_URL of every process. */
  url: string;
  /** The environment every process got (the secrets included). */
  env: Record<string, string>;
  databaseUrl: string;
  webs: Proc[];
  workers: Proc[];
  haproxy: Proc;
  /** The generated HAProxy configuration file. */
  haproxyConfig: string;
  /** The limits it was generated with. */
  balancer: BalancerLimits;
  /** Sends `signal` to the process's whole group. */
  kill(proc: Proc, signal?: NodeJS.Signals): void;
  /** Stops the process (SIGTERM, waits) if it runs, starts it again on the same port, waits until it serves; replaces it in `webs`/`workers`. */
  restart(proc: Proc): Promise<Proc>;
  /** SIGTERM to the webs and workers (they drain), then HAProxy; waits for every exit. */
  stop(): Promise<{ name: string; exit: ProcExit }[]>;
};

const ROOT = path.resolve(import.meta.dirname, '..');
const TEMPLATE = path.join(ROOT, 'deploy', 'haproxy.cfg.template');

/** The balancer's per-source limits and per-process connection caps (deploy/haproxy.cfg.template explains each). */
export type BalancerLimits = {
  /** GET /login requests per source address per minute. */
  loginPerMinute: number;
  /** Webhook posts per source address per minute that fail their signature or secret check (401/403) before that address's webhooks are refused. */
  webhookFailuresPerMinute: number;
  /** Requests each web process is given at once (HAProxy queues the rest). */
  serverMaxconn: number;
  /** Inbox event streams each web process holds at once. */
  streamMaxconn: number;
};

/**
 * An office behind one address logging in together stays under 60 a minute; a legitimate webhook
 * source never fails its signature, so 20 failures a minute is a forger, a prober or a broken
 * configuration; 100 requests at once is well past what one web process serves without queueing
 * (6 + 2 database connections); 1,000 streams is well within what one process holds
 * (bench:events, docs/performance.md#benchevents).
 */
export const BALANCER_DEFAULTS: BalancerLimits = {
  loginPerMinute: 60,
  webhookFailuresPerMinute: 20,
  serverMaxconn: 100,
  streamMaxconn: 1000,
};

/** The limits given over the defaults: whole numbers from 1 to 1,000,000 (they are written into the configuration's text). */
export function balancerLimits(given: Partial<BalancerLimits> = {}): BalancerLimits {
  const limits = { ...BALANCER_DEFAULTS };
  for (const [name, value] of Object.entries(given) as [keyof BalancerLimits, number | undefined][]) {
    if (value === undefined) continue;
    if (!(name in BALANCER_DEFAULTS)) throw new Error(`balancer: no limit called ${name}`);
    if (!Number.isInteger(value) || value < 1 || value > 1_000_000)
      throw new Error(`balancer.${name}: a whole number from 1 to 1000000, not ${value}`);
    limits[name] = value;
  }
  return limits;
}

/** Fills the template's {{…}} fields. */
export function haproxyConfig(fields: {
  bind: string;
  forwardedProto: 'http' | 'https';
  logLevel?: string;
  servers: { name: string; address: string }[];
  limits: BalancerLimits;
}): string {
  const values: Record<string, string> = {
    BIND: fields.bind,
    FORWARDED_PROTO: fields.forwardedProto,
    LOG_LEVEL: fields.logLevel ?? 'notice',
    SERVERS: fields.servers.map((s) => `    server ${s.name} ${s.address}`).join('\n'),
    STREAM_SERVERS: fields.servers.map((s) => `    server ${s.name} ${s.address} track webs/${s.name}`).join('\n'),
    LOGIN_PER_MINUTE: String(fields.limits.loginPerMinute),
    WEBHOOK_FAILURES_PER_MINUTE: String(fields.limits.webhookFailuresPerMinute),
    SERVER_MAXCONN: String(fields.limits.serverMaxconn),
    STREAM_MAXCONN: String(fields.limits.streamMaxconn),
  };
  // Comment lines name the fields too: they are left as they are.
  return readFileSync(TEMPLATE, 'utf8')
    .split('\n')
    .map((line) =>
      line.trimStart().startsWith('#') ? line : line.replace(/\{\{([A-Z_]+)\}\}/g, (whole, key: string) => values[key] ?? whole),
    )
    .join('\n');
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const webCount = options.webs ?? 2;
  const workerCount = options.workers ?? 1;
  if (webCount < 1 || workerCount < 0) throw new Error('a cluster needs at least one web process');
  const haproxyBin = options.haproxyBin ?? findHaproxy();
  const limits = balancerLimits(options.balancer);
  const distDir = options.distDir ?? options.env?.NEXT_DIST_DIR ?? '.next';
  if (options.build !== false)
    await ensureProductionBuild(distDir, { force: options.build === 'force', log: (l) => options.onLine?.('build', l) });
  else if (!existsSync(path.join(ROOT, distDir, 'BUILD_ID')))
    throw new Error(`no production build in ${distDir}/: run \`npm run build\``);

  const line = (name: string) => (options.onLine ? (l: string) => options.onLine!(name, l) : undefined);
  const cleanup: (() => Promise<unknown> | void)[] = [];
  const procs: Proc[] = [];
  const abort = async (err: unknown) => {
    await Promise.all(procs.map((p) => p.stop(5_000)));
    for (const step of cleanup.reverse()) await step();
    throw err;
  };
  let databaseUrl = options.databaseUrl ?? process.env.DATABASE_URL;
  try {
    if (!databaseUrl) databaseUrl = await startEmbeddedDatabase(cleanup, line('postgres'));
    await migrateDatabase(databaseUrl);
  } catch (err) {
    return abort(err);
  }
  const database = { url: databaseUrl };

  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const publicBaseUrl = options.env?.PUBLIC_BASE_URL ?? url;
  // The caller's environment, but not its own port or public origin: the cluster sets those.
  const { PORT: _port, PUBLIC_BASE_URL: _public, ...inherited } = process.env;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({
    ...inherited,
    PLATFORM_API_KEY: process.env.PLATFORM_API_KEY ?? `pk_cluster_${randomBytes(18).toString('base64url')}`,
    SESSION_SECRET: process.env.SESSION_SECRET ?? randomBytes(32).toString('base64url'),
    LOG_LEVEL: 'info',
    ...options.env,
    NODE_ENV: 'production',
    NEXT_DIST_DIR: distDir,
    DATABASE_URL: database.url,
    PUBLIC_BASE_URL: publicBaseUrl,
  })) {
    if (v !== undefined) env[k] = v;
  }

  const dir = mkdtempSync(path.join(os.tmpdir(), 'messaging-cluster-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));

  const spawnApp = (kind: 'web' | 'worker', name: string, appPort?: number): Proc => {
    const args = [
      '--import',
      'tsx',
      'server/cli/start.ts',
      kind === 'web' ? '--web' : '--worker',
      ...(kind === 'web' ? ['--hostname', '127.0.0.1'] : []),
    ];
    const proc = spawnProc(name, process.execPath, args, {
      env: { ...env, ...(appPort ? { PORT: String(appPort) } : {}) },
      onLine: line(name),
    });
    return Object.assign(proc, { kind, port: appPort });
  };
  const ready = async (proc: Proc) => {
    if (proc.kind === 'web') {
      await waitForOk(`http://127.0.0.1:${proc.port}/api/v1/health/live`, {
        alive: proc.alive,
        what: `${proc.name}\n${proc.output()}`,
        timeoutMs: 90_000,
      });
    } else if (['trace', 'debug', 'info'].includes(env.LOG_LEVEL ?? 'info')) {
      const deadline = Date.now() + 90_000;
      while (!proc.output().includes('worker started')) {
        if (!proc.alive() || Date.now() > deadline) throw new Error(`${proc.name} did not start:\n${proc.output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  const webs: Proc[] = [];
  const workers: Proc[] = [];
  let haproxy: Proc;
  const configFile = path.join(dir, 'haproxy.cfg');
  try {
    for (let i = 1; i <= webCount; i++) webs.push(spawnApp('web', `web${i}`, await freePort()));
    for (let i = 1; i <= workerCount; i++) workers.push(spawnApp('worker', `worker${i}`));
    procs.push(...webs, ...workers);
    await Promise.all(procs.map(ready));

    writeFileSync(
      configFile,
      haproxyConfig({
        bind: `127.0.0.1:${port}`,
        forwardedProto: publicBaseUrl.startsWith('https:') ? 'https' : 'http',
        logLevel: options.env?.HAPROXY_LOG_LEVEL,
        servers: webs.map((w) => ({ name: w.name, address: `127.0.0.1:${w.port}` })),
        limits,
      }),
    );
    const check = spawnSync(haproxyBin, ['-c', '-f', configFile], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`HAProxy refused ${configFile}:\n${check.stdout}${check.stderr}`);
    haproxy = Object.assign(
      spawnProc('haproxy', haproxyBin, ['-f', configFile, '-db'], {
        env: { PATH: process.env.PATH ?? '' },
        onLine: line('haproxy'),
      }),
      {
        kind: 'haproxy' as const,
        port,
      },
    );
    procs.push(haproxy);
    await waitForOk(`${url}/api/v1/health/live`, {
      alive: haproxy.alive,
      what: `haproxy\n${haproxy.output()}`,
      timeoutMs: 15_000,
    });
  } catch (err) {
    return abort(err);
  }

  const kill = (proc: Proc, signal: NodeJS.Signals = 'SIGTERM') => proc.kill(signal, 'group');
  const stopTimeoutMs = (Number(env.SHUTDOWN_TIMEOUT_SECONDS) || 20) * 1000 + 15_000;
  let stopped: Promise<{ name: string; exit: ProcExit }[]> | undefined;
  return {
    url,
    env,
    databaseUrl: database.url,
    webs,
    workers,
    haproxy,
    haproxyConfig: configFile,
    balancer: limits,
    kill,
    async restart(proc) {
      const list = proc.kind === 'web' ? webs : proc.kind === 'worker' ? workers : null;
      if (!list) throw new Error('restart: only web and worker processes');
      const index = list.indexOf(proc);
      if (index < 0) throw new Error(`restart: ${proc.name} is not (or no longer) part of this cluster`);
      await proc.stop(stopTimeoutMs);
      const fresh = spawnApp(proc.kind as 'web' | 'worker', proc.name, proc.port);
      list[index] = fresh;
      procs.push(fresh);
      await ready(fresh);
      return fresh;
    },
    stop() {
      stopped ??= (async () => {
        const apps = [...webs, ...workers];
        const exits = await Promise.all(apps.map(async (p) => ({ name: p.name, exit: await p.stop(stopTimeoutMs) })));
        // The balancer last: requests the webs were finishing still had to reach their clients.
        // SIGUSR1 is its soft stop (SIGTERM would end it by the signal).
        exits.push({ name: haproxy.name, exit: await haproxy.stop(5_000, 'SIGUSR1') });
        // Anything restarted away and still around (it should not be).
        await Promise.all(procs.filter((p) => p.alive()).map((p) => p.stop(5_000)));
        for (const step of cleanup.reverse()) await step();
        return exits;
      })();
      return stopped;
    },
  };
}

/**
 * The embedded PostgreSQL (deploy/embedded-postgres.ts) in a process group of its own, so that a
 * terminal's Ctrl-C does not stop it under processes still draining; stopped by the last cleanup.
 */
async function startEmbeddedDatabase(
  cleanup: (() => Promise<unknown> | void)[],
  onLine?: (line: string) => void,
): Promise<string> {
  const holder = spawnProc('postgres', process.execPath, ['--import', 'tsx', 'deploy/embedded-postgres.ts'], {
    env: { ...process.env },
    onLine,
  });
  cleanup.push(async () => {
    holder.kill('SIGTERM', 'leader');
    const timer = setTimeout(() => holder.kill('SIGKILL'), 20_000);
    await holder.exited;
    clearTimeout(timer);
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    const url = holder.output().match(/^DATABASE_URL=(\S+)$/m)?.[1];
    if (url) return url;
    if (!holder.alive() || Date.now() > deadline) throw new Error(`the embedded PostgreSQL did not start:\n${holder.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function findHaproxy(): string {
  const found = systemToolPath('haproxy');
  if (!found) throw new Error(`HAProxy not found: install it (\`${installCommand(['haproxy'])}\`) or set HAPROXY_BIN`);
  return found;
}
