import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { createSql } from '@/db/connect';

const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Applies the committed drizzle migrations. A database is brought up to date by migrateDatabase
 * (server/migrate.ts), which then installs pg-boss's schema and queues.
 */
export async function migrateSchema(url: string): Promise<void> {
  const sql = createSql(url, { max: 1 });
  try {
    await migrate(drizzle(sql), { migrationsFolder });
  } finally {
    await sql.end({ timeout: 5 });
  }
}
