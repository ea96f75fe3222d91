import { migrateDatabase } from '@/server/migrate';
import { parseEnv } from '@/server/env';
import { sandboxEnabled } from '@/server/services/sandbox/phone';
import { ensureDatabase } from './database';
import { runProcesses } from './processes';

/**
 * `npm start` (production): migrations, then the web server and the worker as two processes.
 * `--web` / `--worker` run one of them alone (to scale each out); those expect migrations done.
 * `--hostname H` binds the web server to one address (every interface otherwise).
 */
async function main() {
  const only = process.argv.includes('--web') ? 'web' : process.argv.includes('--worker') ? 'worker' : 'both';
  (process.env as Record<string, string>).NODE_ENV = 'production';
  const database = await ensureDatabase();
  process.env.DATABASE_URL = database.url;
  const config = parseEnv(process.env); // fails here, naming the variable, before anything starts
  if (only === 'both') await migrateDatabase(database.url);
  if (sandboxEnabled(config)) {
    console.warn(
      '\n  WARNING: SANDBOX_ENABLED=true: /sandbox is served in production. Anyone signed in can post signed\n' +
        '  webhooks as any client of their business. Use it for a demo, never for real clients.\n',
    );
  }
  // The web server drains on SIGTERM (server/cli/web-server.ts); `--hostname H` is passed on.
  const hostname = process.argv.includes('--hostname')
    ? ['--hostname', process.argv[process.argv.indexOf('--hostname') + 1] ?? '']
    : [];
  const commands = [
    {
      name: 'web',
      command: 'node',
      args: ['--import', 'tsx', 'server/cli/web-server.ts', '--port', String(config.port), ...hostname],
    },
    // Without tsx's wrapper process, which SIGKILLs a child that is slow to acknowledge a relayed SIGTERM.
    { name: 'worker', command: 'node', args: ['--import', 'tsx', 'workers/index.ts'] },
  ].filter((c) => only === 'both' || c.name === only);
  runProcesses(commands, process.env, database.stop);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
