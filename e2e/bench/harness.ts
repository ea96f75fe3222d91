import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '@/db/embedded';
import { freePort } from '@/db/embedded';
import { migrateDatabase } from '@/server/migrate';

/** Shared pieces of the `npm run bench:*` scripts: a database, the production server, a worker. */

export const percentile = (values: number[], p: number) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
};
export const median = (values: number[]) => percentile(values, 50);
export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` over `items`, `concurrency` at a time, in order of start. */
export async function pool<T>(items: T[], concurrency: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(everyMs);
  }
  return false;
}

/**
 * BENCH_DATABASE_URL when set (its database is used as is), else a throw-away embedded PostgreSQL
 * with `settings` (server settings, such as track_commit_timestamp).
 */
export async function benchDatabase(settings: Record<string, string> = {}): Promise<{ url: string; stop: () => Promise<void> }> {
  if (process.env.BENCH_DATABASE_URL) {
    await migrateDatabase(process.env.BENCH_DATABASE_URL);
    return { url: process.env.BENCH_DATABASE_URL, stop: async () => {} };
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'messaging-bench-'));
  chmodSync(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), settings });
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

/** `next build` into .next-bench (skipped with BENCH_SKIP_BUILD=1), then the production web server on a free port. */
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
  // The production web server as `npm start` runs it (server/cli/web-server.ts: Next.js's handler in
  // a plain Node server), directly under node, so the spawned process is the one that serves (its
  // pid is the one whose thread bench:inbox reads). BENCH_CPU_PROF=<dir>: under `node --cpu-prof`
  // (not allowed in NODE_OPTIONS), writing a .cpuprofile into <dir> when it stops (cpu-profile.ts).
  const profileDir = process.env.BENCH_CPU_PROF;
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`] : [];
  const child = spawn(
    process.execPath,
    [...profile, '--import', 'tsx', 'server/cli/web-server.ts', '--port', String(port), '--hostname', '127.0.0.1'],
    { env: serverEnv, stdio: ['ignore', 'ignore', 'inherit'] },
  );
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

/**
 * The worker as one process (`node --import tsx`, as `npm start` runs it), so that stopChild's
 * signal reaches the worker itself: through the `tsx` command a SIGKILL would kill only its
 * wrapper and leave the worker running, unseen, for the rest of the run (--chaos) and after it.
 */
/** The worker (workers/index.ts) as production runs it; BENCH_WORKER_PROFILE_DIR=dir writes its CPU profile there when it stops. */
export function startWorkerProcess(env: NodeJS.ProcessEnv): ChildProcess {
  const profile = process.env.BENCH_WORKER_PROFILE_DIR;
  const profileArgs = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
  return spawn(process.execPath, [...profileArgs, '--import', 'tsx', 'workers/index.ts'], {
    env: { ...env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

// ---------------------------------------------------------------------------------------------
// --repeat N: the whole measurement N times in a row, then the median and the spread per figure.

/**
 * One measured figure of a run, beside the ceiling it is judged against, measured in the same run
 * (the bare route handler, the twilio client without a database…): on shared cores only a ratio
 * within one run compares runs. `higherIsBetter` decides how the ratio reads: a rate as a share of
 * its ceiling, a latency as how many times the ceiling it takes.
 */
export type Figure = {
  name: string;
  value: number;
  unit: string;
  digits?: number;
  ceiling?: { name: string; value: number };
  /** A latency: its ratio reads as how many times its ceiling it takes (×), not as a share (%). */
  lowerIsBetter?: boolean;
  /** What the figure must reach, in words ("≥ 50% of the ceiling", "p95 ≤ 300 ms"); printed, not asserted here. */
  target?: string;
  /** Did this run meet `target`? Undefined when there is none. */
  ok?: boolean;
};

/** `--repeat N` or `--repeat=N` on the command line (`npm run bench:x -- --repeat 3`); 1 when absent. */
export function repeatCount(argv: string[] = process.argv): number {
  let raw: string | undefined;
  const i = argv.indexOf('--repeat');
  if (i >= 0) raw = argv[i + 1];
  else raw = argv.find((a) => a.startsWith('--repeat='))?.slice('--repeat='.length);
  if (raw === undefined) return 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new Error(`--repeat takes a whole number from 1 to 100, not ${raw}`);
  return n;
}

const ratioOf = (f: Figure) =>
  f.ceiling && f.ceiling.value > 0 ? (f.lowerIsBetter ? 1 : 100) * (f.value / f.ceiling.value) : NaN;
const ratioText = (f: Figure, values: number[]) =>
  values.length ? `${spread(values, f.lowerIsBetter ? 1 : 0)}${f.lowerIsBetter ? '×' : '%'}` : '—';
const spread = (values: number[], digits: number) =>
  values.length > 1
    ? `${fmt(median(values), digits)} (${fmt(Math.min(...values), digits)}–${fmt(Math.max(...values), digits)})`
    : fmt(values[0] ?? NaN, digits);

/** Prints one run's figures, each beside its ceiling of the same run and the ratio between them. */
export function printFigures(title: string, figures: Figure[]): void {
  console.log(`\n${title}`);
  console.log(
    `  ${'figure'.padEnd(60)} ${'value'.padStart(14)}   ${'ceiling (same run)'.padEnd(40)} ${'ratio'.padStart(7)}  target`,
  );
  for (const f of figures) {
    const digits = f.digits ?? 1;
    const ceiling = f.ceiling ? `${f.ceiling.name} ${fmt(f.ceiling.value, digits)} ${f.unit}` : '—';
    const ratio = f.ceiling ? ratioText(f, [ratioOf(f)]) : '';
    const verdict = f.ok === undefined ? '' : f.ok ? ' ok' : ' MISSED';
    console.log(
      `  ${f.name.padEnd(60)} ${`${fmt(f.value, digits)} ${f.unit}`.padStart(14)}   ${ceiling.padEnd(40)} ${ratio.padStart(7)}  ${f.target ?? ''}${verdict}`,
    );
  }
}

/**
 * Runs `measure` `repeat` times in a row (each run prints its own figures, printFigures), then a
 * summary: per figure the median and the spread (min–max) across runs, of the value, of its ceiling
 * and of the per-run ratio, and in how many runs it met its target. Figures are matched by name.
 */
export async function repeatRuns(
  repeat: number,
  measure: (run: number) => Promise<Figure[]>,
  title = 'figures',
): Promise<Figure[][]> {
  const runs: Figure[][] = [];
  for (let run = 1; run <= repeat; run++) {
    if (repeat > 1) console.log(`\n=== run ${run} of ${repeat} ===`);
    const figures = await measure(run);
    printFigures(repeat > 1 ? `${title}, run ${run} of ${repeat}` : title, figures);
    runs.push(figures);
  }
  if (repeat > 1) printSummary(runs, title);
  return runs;
}

export function printSummary(runs: Figure[][], title = 'figures'): void {
  const names = [...new Set(runs.flatMap((r) => r.map((f) => f.name)))];
  console.log(`\nsummary of ${runs.length} runs: ${title}, median (min–max)`);
  console.log(`  ${'figure'.padEnd(60)} ${'value'.padEnd(30)} ${'ceiling'.padEnd(30)} ${'ratio'.padEnd(18)} target met`);
  for (const name of names) {
    const fs = runs.map((r) => r.find((f) => f.name === name)).filter((f): f is Figure => f !== undefined);
    const first = fs[0]!;
    const digits = first.digits ?? 1;
    const ceilings = fs.flatMap((f) => (f.ceiling ? [f.ceiling.value] : []));
    const ratios = fs.map(ratioOf).filter(Number.isFinite);
    const judged = fs.filter((f) => f.ok !== undefined);
    console.log(
      `  ${name.padEnd(60)} ${`${spread(
        fs.map((f) => f.value),
        digits,
      )} ${first.unit}`.padEnd(
        30,
      )} ${(ceilings.length ? spread(ceilings, digits) : '—').padEnd(30)} ${ratioText(first, ratios).padEnd(18)} ${
        judged.length ? `${judged.filter((f) => f.ok).length}/${judged.length} runs (${first.target})` : ''
      }`,
    );
  }
}
