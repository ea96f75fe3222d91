import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startEmbeddedPostgres } from '@/db/embedded';
import { migrateDatabase } from '@/server/migrate';
import { startFakeTwilio, type FakeTwilio } from '@/server/testing/fake-twilio';
import { startSmtpSink, type SmtpSink } from '@/server/testing/smtp-sink';

/**
 * What the fuzzer runs against: the production build (`.next-e2e`, which the Playwright stage of
 * `npm test` has just built; built here when missing or with FUZZ_BUILD=1) with its worker, a
 * throw-away embedded PostgreSQL, and the outside world faked at its boundary: the fake Twilio REST
 * API and a real SMTP sink, so whatever leaves the service can be counted.
 */
/** Staff notification mail comes from this address (never a business's sender). */
export const NOTIFICATION_SENDER = 'notifications@staff-mail.fuzz.example.com';

export type FuzzStack = {
  baseUrl: string;
  databaseUrl: string;
  platformKey: string;
  twilio: FakeTwilio;
  sink: SmtpSink;
  webhookSink: { url: string; received: () => number; close: () => Promise<void> };
  stop: () => Promise<void>;
};

const DIST_DIR = '.next-e2e';
const bin = (name: string) => path.resolve('node_modules', '.bin', name);

export async function startFuzzStack(): Promise<FuzzStack> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'messaging-fuzz-'));
  chmodSync(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg') });
  await migrateDatabase(pg.url);
  const twilio = await startFakeTwilio();
  const sink = await startSmtpSink();
  const webhookSink = await startWebhookSink();
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const platformKey = 'fuzz-platform-key-0123456789';
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    NEXT_DIST_DIR: DIST_DIR,
    PORT: String(port),
    DATABASE_URL: pg.url,
    PUBLIC_BASE_URL: baseUrl,
    PLATFORM_API_KEY: platformKey,
    SESSION_SECRET: 'fuzz-session-secret-0123456789',
    SMS_PROVIDER: 'twilio',
    TWILIO_ACCOUNT_SID: twilio.accountSid,
    TWILIO_AUTH_TOKEN: twilio.authToken,
    TWILIO_API_BASE_URL: twilio.url,
    // Voice tokens are signed offline: made-up credentials let the token operation answer.
    TWILIO_API_KEY_SID: `SK${'0'.repeat(32)}`,
    TWILIO_API_KEY_SECRET: 'fuzz-api-key-secret',
    TWILIO_TWIML_APP_SID: `AP${'0'.repeat(32)}`,
    EMAIL_PROVIDER: 'smtp',
    SMTP_URL: sink.url,
    NOTIFICATION_EMAIL_FROM: NOTIFICATION_SENDER,
    EMAIL_INBOUND_SECRET: 'fuzz-inbound-secret',
    // Webhook endpoints the fuzzer registers point at the local sink (its pool of URLs), which is
    // a loopback address: allowed here, and checked after the run to be the only one called.
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    // The fuzzer is not testing the rate limit (its own tests do).
    RATE_LIMIT_PER_MINUTE: '10000000',
    // The worker's recovery sweep within seconds, so the stateful sequences (record → status → a
    // sweep) see it run: a recorded message must survive it unsent.
    RECOVERY_SWEEP_INTERVAL_SECONDS: '1',
    RECOVERY_ORPHANED_SEND_SECONDS: '1',
    AUTH_TOKENS_PER_BUSINESS_PER_MINUTE: '1000000',
    LOG_LEVEL: process.env.FUZZ_LOG_LEVEL ?? 'fatal',
  };
  if (
    process.env.FUZZ_BUILD ||
    !existsSync(path.join(DIST_DIR, 'BUILD_ID')) ||
    newestSource() > statSync(path.join(DIST_DIR, 'BUILD_ID')).mtimeMs
  ) {
    const build = spawnSync(bin('next'), ['build'], {
      env: { ...env, NEXT_SKIP_TYPECHECK: '1' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (build.status !== 0) throw new Error('next build failed');
  }
  // The server's logs (pino, stdout) only when FUZZ_LOG_LEVEL asks for them, to chase a failure.
  const stdio = ['ignore', process.env.FUZZ_LOG_LEVEL ? 'inherit' : 'ignore', 'inherit'] as const;
  const children: ChildProcess[] = [
    spawn(bin('next'), ['start', '--port', String(port)], { env, stdio: [...stdio] }),
    spawn(bin('tsx'), ['workers/index.ts'], { env, stdio: [...stdio] }),
  ];
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ok = await fetch(`${baseUrl}/api/v1/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error('the production server did not start within 60 s');
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    baseUrl,
    databaseUrl: pg.url,
    platformKey,
    twilio,
    sink,
    webhookSink,
    stop: async () => {
      await Promise.all(
        children.map((c) => (c.exitCode !== null ? undefined : new Promise((r) => (c.once('exit', r), c.kill('SIGTERM'))))),
      );
      await twilio.close();
      await sink.close();
      await webhookSink.close();
      await pg.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The newest change to the code a build holds: an older build is rebuilt rather than fuzzed. */
function newestSource(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|tsx|css|mjs)$/.test(entry.name) && !entry.name.includes('.test.'))
        newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  for (const dir of ['app', 'components', 'server', 'db']) walk(dir);
  return newest;
}

/** A webhook receiver on loopback that answers 200 and counts what it got. */
async function startWebhookSink() {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => (received++, res.end()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    received: () => received,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
