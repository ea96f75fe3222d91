import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import PgBoss from 'pg-boss';
import { createSql } from './client';

const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Applies the committed drizzle migrations, then lets pg-boss create or upgrade its own schema, so
 * both web and worker processes can enqueue from their first request.
 */
export async function migrateDatabase(url: string): Promise<void> {
  const sql = createSql(url, { max: 1 });
  try {
    await migrate(drizzle(sql), { migrationsFolder });
  } finally {
    await sql.end({ timeout: 5 });
  }
  const boss = new PgBoss({ connectionString: url, supervise: false, schedule: false, max: 1 });
  boss.on('error', () => {});
  await boss.start();
  await boss.stop({ graceful: false, wait: true });
}
