import { migrateDatabase } from '@/server/migrate';
import { ensureDatabase } from './database';

/** `npm run db:migrate` */
try {
  const database = await ensureDatabase();
  try {
    await migrateDatabase(database.url);
    console.log('Migrations applied.');
  } finally {
    await database.stop();
  }
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
}
