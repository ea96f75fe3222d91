import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A production build (`next build`) in `distDir` that is not older than the sources: built when
 * missing, when a source under app/, components/, server/ or db/ changed after it (the rule of the
 * fuzz stack, e2e/fuzz/stack.ts), or when `force`. Test files that run in parallel
 * share one build: a lock directory beside it lets one build while the others wait, then reuse it.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');

export async function ensureProductionBuild(
  distDir: string,
  options: { force?: boolean; env?: NodeJS.ProcessEnv; log?: (line: string) => void } = {},
): Promise<void> {
  const buildId = path.join(ROOT, distDir, 'BUILD_ID');
  const fresh = () => !options.force && existsSync(buildId) && statSync(buildId).mtimeMs >= newestSource();
  if (fresh()) return;
  const release = await lock(path.join(ROOT, `${distDir}.build-lock`));
  try {
    if (fresh()) return; // built by another process while this one waited
    options.log?.(`building the production server into ${distDir}/ (next build)…`);
    const build = spawnSync(path.join(ROOT, 'node_modules/.bin/next'), ['build'], {
      cwd: ROOT,
      env: { ...process.env, ...options.env, NODE_ENV: 'production', NEXT_DIST_DIR: distDir, NEXT_SKIP_TYPECHECK: '1' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (build.status !== 0) throw new Error(`next build into ${distDir} failed (exit ${build.status})`);
  } finally {
    release();
  }
}

/** The newest change to the code a build holds (tests excluded). */
export function newestSource(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(?:ts|tsx|css|mjs)$/.test(entry.name) && !entry.name.includes('.test.'))
        newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  for (const dir of ['app', 'components', 'server', 'db']) walk(path.join(ROOT, dir));
  for (const file of ['next.config.mjs', 'proxy.ts']) {
    const full = path.join(ROOT, file);
    if (existsSync(full)) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

/** mkdir is atomic: the directory is the lock, its `pid` file names the holder (a dead one's lock is taken over). */
async function lock(dir: string): Promise<() => void> {
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(path.join(dir, 'pid'), String(process.pid));
      return () => rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let holder = NaN;
    try {
      holder = Number(readFileSync(path.join(dir, 'pid'), 'utf8'));
    } catch {
      // being written or removed right now
    }
    if (Number.isInteger(holder) && !alive(holder)) rmSync(dir, { recursive: true, force: true });
    if (Date.now() > deadline) throw new Error(`${dir} held for 15 minutes: remove it if no build is running`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
