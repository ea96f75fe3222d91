import { ensureDatabase } from '@/server/cli/database';
import { releaseEmbeddedPostgresSignals } from '@/server/cli/signals';

/**
 * The local deployment's PostgreSQL when DATABASE_URL is unset: the embedded one under .data/pg
 * (db/embedded.ts, as `npm run dev` uses it; reused when already running), held by this process,
 * which deploy/cluster.ts starts in a process group of its own. A terminal's Ctrl-C therefore does
 * not reach PostgreSQL: the cluster stops it last (SIGTERM here), once the web processes and
 * workers have drained.
 *
 * Prints `DATABASE_URL=<url>` once the database accepts connections.
 */
releaseEmbeddedPostgresSignals();
const database = await ensureDatabase((line) => console.log(line));
console.log(`DATABASE_URL=${database.url}`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await database.stop().catch((err: unknown) => console.error(err));
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
// Nothing else keeps this process up when it reuses a database another command started.
setInterval(() => {}, 2 ** 30);
