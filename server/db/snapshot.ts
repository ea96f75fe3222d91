import { sql } from 'drizzle-orm';
import { db, type Tx } from './client';

/**
 * Runs `read` in one read-only snapshot: on the pool (`tx` left to `db`), a repeatable-read,
 * read-only transaction of its own, so several statements see the same rows; on a caller's
 * transaction, in that transaction (its snapshot is the caller's). `settings` are set for the
 * transaction only (`set_config(…, true)`), e.g. work_mem for a read that groups in memory.
 */
export async function inReadSnapshot<T>(
  read: (tx: Tx) => Promise<T>,
  settings: Record<string, string> = {},
  tx: Tx = db,
): Promise<T> {
  if (tx !== db) return read(tx);
  const entries = Object.entries(settings);
  return db.transaction(
    async (tx) => {
      if (entries.length > 0)
        await tx.execute(
          sql`select ${sql.join(
            entries.map(([name, value]) => sql`set_config(${name}, ${value}, true)`),
            sql`, `,
          )}`,
        );
      return read(tx);
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}
