import { migrateDatabase } from '@/server/migrate';
import { developmentSecrets, ensureDatabase } from './database';
import { devLogFormatter, pipeLines } from './dev-logs';
import { printWhenReady } from './dev-ready';
import { runProcesses } from './processes';

/**
 * `npm run dev`: embedded PostgreSQL unless DATABASE_URL is set, migrations, demo data on an empty
 * database, then the web server around Next's development server (server/cli/web-server.ts --dev) and
 * the worker; prints a login link and the platform key, then the processes' logs in a readable form
 * (pino-pretty; `npm start` keeps them JSON).
 */
async function main() {
  const started = Date.now();
  const secrets = developmentSecrets();
  process.env.PLATFORM_API_KEY ??= secrets.platformApiKey;
  process.env.SESSION_SECRET ??= secrets.sessionSecret;
  const database = await ensureDatabase();
  process.env.DATABASE_URL = database.url;
  await migrateDatabase(database.url);

  // Imported after DATABASE_URL is final: these read the configuration on first use.
  const { loadEnv } = await import('@/server/env');
  const config = loadEnv();
  const { seedDemoData, databaseHasData } = await import('@/server/demo/seed');
  const { closeDb } = await import('@/server/db/client');
  const { loginLinkForOwner } = await import('./login-link');
  if (!(await databaseHasData())) {
    const summary = await seedDemoData();
    console.log(`Demo data: ${summary.businesses.length} businesses, ${summary.clients} clients, ${summary.messages} messages.`);
  }
  const link = await loginLinkForOwner();
  await closeDb();

  // The children's output is piped through the log formatter: Next.js would see no terminal and drop its colours.
  const colorize = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
  const env = {
    ...process.env,
    PORT: String(config.port),
    NODE_ENV: 'development' as const,
    ...(colorize && !process.env.FORCE_COLOR ? { FORCE_COLOR: '1' } : {}),
  };
  const format = devLogFormatter({ colorize });
  const [web] = runProcesses(
    [
      // Our web server around Next's development server: the live events stream is the production one.
      {
        name: 'web',
        command: 'node',
        args: ['--import', 'tsx', 'server/cli/web-server.ts', '--dev', '--port', String(config.port)],
      },
      { name: 'worker', command: 'tsx', args: ['workers/index.ts'] },
    ],
    env,
    database.stop,
    // Readable logs: pino's JSON lines pretty-printed, one line each (server/cli/dev-logs.ts).
    (output, name) => void pipeLines(output, name, process.stdout, format),
  );
  // Printed once the web server answers: a click on the link while it is still starting is refused.
  await printWhenReady(
    `http://127.0.0.1:${config.port}/api/v1/health/live`,
    () => [
      '',
      `  Database:      ${database.embedded ? `embedded PostgreSQL (${database.url})` : 'DATABASE_URL'}`,
      `  Platform key:  ${config.platformApiKey}`,
      `  API reference: ${config.publicBaseUrl}/api/v1/docs`,
      `  Inbox login:   ${link}`,
      `  (ready in ${((Date.now() - started) / 1000).toFixed(1)} s; the web server compiles pages on first visit)`,
      '',
    ],
    { alive: () => web!.exitCode === null && web!.signalCode === null },
  );
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
