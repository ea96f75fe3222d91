import { parseArgs } from 'node:util';
import { closeDb } from '@/server/db/client';
import { backfillReports, DEFAULT_BACKFILL_LIMIT } from '@/server/services/reports/backfill';
import { ensureDatabase } from './database';

/**
 * `npm run reports:recount [-- --business <id>[,<id>…] | --all] [--limit <n>]`: reports' backfill
 * (server/services/reports/backfill.ts). Without arguments: the businesses whose rollups are not
 * counted in their zones or whose history predates the `reports` handler (client messages, no cycle
 * yet), at most --limit (default 100) per run; businesses named are all recounted (--limit, if
 * given, must allow them); --all recounts every business (no --limit: a second run would redo the
 * same first ones).
 */
function parse(argv: string[]) {
  // Strict: an unknown or misspelt option is refused, not ignored.
  const { values } = parseArgs({
    args: argv,
    options: { business: { type: 'string' }, all: { type: 'boolean' }, limit: { type: 'string' } },
    strict: true,
    allowPositionals: false,
  });
  const businessIds = values.business?.split(',').map(Number);
  if (businessIds?.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`--business takes business ids, not ${values.business}`);
  if (businessIds && values.all) throw new Error('--business and --all: one or the other');
  if (values.all && values.limit !== undefined) throw new Error('--all recounts every business: --limit is for the other runs');
  if (values.all) return { all: true as const };
  const limit = values.limit === undefined ? (businessIds?.length ?? DEFAULT_BACKFILL_LIMIT) : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`--limit takes a whole number ≥ 1, not ${values.limit}`);
  // Named businesses are all recounted or the run is refused: never some of them, silently.
  if (businessIds && new Set(businessIds).size > limit)
    throw new Error(`--business names ${new Set(businessIds).size} businesses, more than --limit ${limit}`);
  return { businessIds, limit };
}

try {
  const options = parse(process.argv.slice(2));
  const database = await ensureDatabase();
  process.env.DATABASE_URL = database.url;
  try {
    const done = await backfillReports(options, (line) => console.log(line));
    console.log(done.size === 0 ? 'Nothing to recount.' : `Recounted ${done.size} business(es).`);
  } finally {
    await closeDb();
    await database.stop();
  }
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
}
