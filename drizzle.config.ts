import { defineConfig } from 'drizzle-kit';

// `npm run db:generate` writes SQL migrations from db/schema; they are committed and applied by
// `npm run db:migrate` (never `drizzle-kit push` outside a scratch database).
export default defineConfig({
  dialect: 'postgresql',
  schema: './db/schema/index.ts',
  out: './db/migrations',
  dbCredentials: { url: process.env.DATABASE_URL ?? 'postgres://localhost/unused' },
});
