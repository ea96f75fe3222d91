import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';

const startedAt = Date.now();
export const APP_VERSION = process.env.npm_package_version ?? '0.1.0';

type ServiceHealth = { name: string; status: 'ok' | 'down'; latency_ms: number };

/** Pings PostgreSQL with a short timeout, so a dead database answers "down" quickly, not after minutes. */
export async function checkDatabase(timeoutMs = 2000, tx: Tx = db): Promise<ServiceHealth> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      tx.execute(sql`select 1`),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
      }),
    ]);
    return { name: 'database', status: 'ok', latency_ms: Math.round((performance.now() - started) * 10) / 10 };
  } catch {
    return { name: 'database', status: 'down', latency_ms: Math.round(performance.now() - started) };
  } finally {
    clearTimeout(timer);
  }
}

export async function getHealth(tx: Tx = db) {
  const database = await checkDatabase(undefined, tx);
  return {
    status: database.status === 'ok' ? ('ok' as const) : ('degraded' as const),
    version: APP_VERSION,
    uptime_seconds: Math.round((Date.now() - startedAt) / 1000),
    services: [database],
  };
}
