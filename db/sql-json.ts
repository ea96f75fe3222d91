import { sql, type SQL } from 'drizzle-orm';

/**
 * A timestamptz as the API writes timestamps (JavaScript's `Date.prototype.toISOString`: UTC,
 * milliseconds, `Z`), for answers whose JSON PostgreSQL builds. Both truncate microseconds to
 * milliseconds; null stays null.
 */
export const isoTimestamp = (column: SQL) => sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
