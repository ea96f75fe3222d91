import { getHealth as op } from '@/server/http/operations/health';
import { route } from '@/server/http/route';
import { getHealth } from '@/server/services/health';

export const dynamic = 'force-dynamic';

// GET: process health; `degraded` when PostgreSQL is down.
export const GET = route(op, ({ tx }) => getHealth(tx));
