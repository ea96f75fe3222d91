import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '@/db/embedded';
import { migrateDatabase } from '@/server/migrate';
import { runProcesses } from '@/server/cli/processes';

/**
 * The server Playwright tests run against: a throw-away embedded PostgreSQL, migrations, a
 * production build in .next-e2e/ (kept apart from a developer's .next/), then the production web
 * server (server/cli/web-server.ts) and the worker, exactly as `npm start` runs them.
 */
const port = Number(process.env.E2E_WEB_PORT ?? 3100);
const pgPort = Number(process.env.E2E_PG_PORT ?? 54339);
const dir = mkdtempSync(path.join(os.tmpdir(), 'messaging-e2e-'));
chmodSync(dir, 0o755);
const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port: pgPort });
await migrateDatabase(pg.url);

const env = {
  ...process.env,
  DATABASE_URL: pg.url,
  NEXT_DIST_DIR: '.next-e2e',
  NODE_ENV: 'production' as const,
  PORT: String(port),
};
if (!process.env.E2E_SKIP_BUILD) {
  const build = spawnSync(path.resolve('node_modules/.bin/next'), ['build'], {
    stdio: 'inherit',
    env: { ...env, NEXT_SKIP_TYPECHECK: '1' },
  });
  if (build.status !== 0) {
    await pg.stop();
    process.exit(build.status ?? 1);
  }
}
runProcesses(
  [
    { name: 'web', command: 'node', args: ['--import', 'tsx', 'server/cli/web-server.ts', '--port', String(port)] },
    { name: 'worker', command: 'node', args: ['--import', 'tsx', 'workers/index.ts'] },
  ],
  env,
  async () => {
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  },
);
