import pg, { type Pool, type PoolClient, type PoolConfig } from 'pg';
import type PgBoss from 'pg-boss';
import { connectionDied } from '@/server/db/retry';
import { logger } from '@/server/logger';

/**
 * The worker's pg-boss connections: the node-postgres pool pg-boss would open itself, handed to it
 * through its `db` option so that its statements follow the rule of every pool
 * (docs/architecture.md#lost-connections, server/db/retry.ts): a statement whose connection died before anything
 * of it was sent runs again, once, on a fresh connection. That is a connection that failed while
 * it opened, or a client that had already lost its connection and refused the statement.
 * A statement handed to a live connection may have run: its error is pg-boss's, as before.
 */
export type BossDb = PgBoss.Db & { close: () => Promise<void> };

type Connects = Pick<Pool, 'connect'>;

export function bossDb(config: PoolConfig & { onError: (err: Error) => void }): BossDb {
  const { onError, ...options } = config;
  const pool = new pg.Pool(options);
  // An idle connection lost (PostgreSQL restarting): the pool drops it; without a listener the
  // 'error' event would end the process.
  pool.on('error', onError);
  return { executeSql: (text, values) => executeSql(pool, text, values), close: () => pool.end() };
}

/** node-postgres refuses a statement on a client whose connection is gone, before sending it. */
const refusedUnsent = (err: unknown) => err instanceof Error && /is not queryable$/.test(err.message);

/** A connection that ended while it opened: the server closed it (shutting down) before any statement. */
const diedOpening = (err: unknown) =>
  connectionDied(err) || (err instanceof Error && err.message === 'Connection terminated unexpectedly');

export async function executeSql(pool: Connects, text: string, values?: unknown[]): Promise<{ rows: unknown[] }> {
  for (let attempt = 1; ; attempt++) {
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      if (attempt === 1 && diedOpening(err)) {
        retried(err);
        continue;
      }
      throw err;
    }
    // As pg's own pool.query: a client that errors while checked out must not end the process,
    // and one that failed a statement leaves the pool.
    const onError = () => {};
    client.on('error', onError);
    try {
      const result = await client.query(text, values);
      client.release();
      return result;
    } catch (err) {
      client.release(err instanceof Error ? err : true);
      if (attempt === 1 && refusedUnsent(err)) {
        retried(err);
        continue;
      }
      throw err;
    } finally {
      client.off('error', onError);
    }
  }
}

function retried(err: unknown) {
  logger.warn(
    { err: { message: (err as Error).message, code: (err as { code?: string }).code } },
    'pg-boss: database connection gone before the statement was sent; sent again on a fresh connection',
  );
}
