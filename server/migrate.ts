import { migrateSchema } from '@/db/migrate';
import { installJobQueues } from '@/server/jobs/install';

/**
 * Brings a database up to date: the committed drizzle migrations (db/migrate.ts), then pg-boss's
 * schema, its fetch index and every queue (server/jobs/install.ts).
 */
export async function migrateDatabase(url: string): Promise<void> {
  await migrateSchema(url);
  await installJobQueues(url);
}
