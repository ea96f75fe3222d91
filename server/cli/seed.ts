import { ensureDatabase } from './database';

/** `npm run db:seed`: demo data into an empty, migrated database. */
const database = await ensureDatabase();
process.env.DATABASE_URL = database.url;
const { seedDemoData } = await import('@/server/demo/seed');
const { closeDb } = await import('@/server/db/client');
try {
  const summary = await seedDemoData();
  console.log(
    JSON.stringify(
      { ...summary, businesses: summary.businesses.map((b) => ({ id: b.id, name: b.name, ownerStaffId: b.ownerStaffId })) },
      null,
      2,
    ),
  );
} finally {
  await closeDb();
  await database.stop();
}
