import { getLiveness as op } from '@/server/http/operations/health';
import { route } from '@/server/http/route';

export const dynamic = 'force-dynamic';

// GET: liveness only (no dependency checked): for process supervisors, and the framework's own
// ceiling in the webhook and inbox benchmarks.
export const GET = route(op, async () => ({ status: 'ok' as const }));
