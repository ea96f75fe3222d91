import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '@/db/embedded';
import { freePort } from '@/db/embedded';
import { migrateDatabase } from '@/db/migrate';

/** Shared pieces of the `npm run bench:*` scripts: a database, the production server, a worker. */

export const percentile = (values: number[], p: number) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
};
export const median = (values: number[]) => percentile(values, 50);
export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(everyMs);
  }
  return false;
}

/** DATABASE_URL when set (its database is used as is), else a throw-away embedded PostgreSQL. */
export async function benchDatabase(): Promise<{ url: string; stop: () => Promise<void> }> {
  if (process.env.BENCH_DATABASE_URL) {
    await migrateDatabase(process.env.BENCH_DATABASE_URL);
    return { url: process.env.BENCH_DATABASE_URL, stop: async () => {} };
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'messaging-bench-'));
  chmodSync(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg') });
  await migrateDatabase(pg.url);
  return {
    url: pg.url,
    stop: async () => {
      await pg.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const bin = (name: string) => path.resolve('node_modules', '.bin', name);

/** `next build` into .next-bench (skipped with BENCH_SKIP_BUILD=1), then `next start` on a free port. */
export async function startWebServer(
  env: NodeJS.ProcessEnv,
  extraEnv: (url: string) => Record<string, string> = () => ({}),
): Promise<{ url: string; child: ChildProcess; stop: () => Promise<void> }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const serverEnv = {
    ...env,
    ...extraEnv(url),
    NODE_ENV: 'production' as const,
    NEXT_DIST_DIR: '.next-bench',
    PORT: String(port),
    LOG_LEVEL: 'warn',
  };
  if (!process.env.BENCH_SKIP_BUILD) {
    console.log('building the production server (set BENCH_SKIP_BUILD=1 to reuse .next-bench)…');
    const build = spawnSync(bin('next'), ['build'], { env: serverEnv, stdio: ['ignore', 'ignore', 'inherit'] });
    if (build.status !== 0) throw new Error('next build failed');
  }
  const child = spawn(bin('next'), ['start', '--port', String(port)], { env: serverEnv, stdio: ['ignore', 'ignore', 'inherit'] });
  const up = await waitUntil(
    async () =>
      fetch(`${url}/api/v1/health`).then(
        (r) => r.ok,
        () => false,
      ),
    60_000,
    200,
  );
  if (!up) throw new Error('web server did not start');
  return { url, child, stop: () => stopChild(child) };
}

export function startWorkerProcess(env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(bin('tsx'), ['workers/index.ts'], { env: { ...env, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'inherit'] });
}

export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}
