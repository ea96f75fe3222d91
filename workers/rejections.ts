import { isDatabaseUnavailable } from '@/server/errors';
import { logger } from '@/server/logger';

/**
 * Ends the process (or, in a worker thread, the thread) on an unhandled rejection, except a lost
 * database connection's: see survivableRejection.
 */
export function exitOnUnhandledRejection(message: string): void {
  process.on('unhandledRejection', (err) => {
    if (survivableRejection(err)) return;
    logger.fatal({ err }, message);
    process.exit(1);
  });
}

/**
 * postgres.js loads array types on each new connection and drops that query's promise; when the
 * connection breaks mid-query (a PostgreSQL restart) the rejection is unhandled (porsager/postgres
 * #1192, #1205). A lost connection is survivable (logged; true); anything else is not (false), and
 * the caller stops.
 */
export function survivableRejection(err: unknown): boolean {
  if (!isDatabaseUnavailable(err)) return false;
  logger.warn(
    { err: { message: (err as Error).message, code: (err as { code?: string }).code } },
    'database connection lost (unhandled in driver); continuing',
  );
  return true;
}
