import { getDatabaseHealth as op } from '@/server/http/operations/health';
import { json, route } from '@/server/http/route';
import { checkDatabase } from '@/server/services/health';

export const dynamic = 'force-dynamic';

// GET: 200 when PostgreSQL answers, 503 when it does not.
export const GET = route(op, async ({ tx }) => {
  const database = await checkDatabase(undefined, tx);
  return database.status === 'ok' ? database : json(503, database);
});
