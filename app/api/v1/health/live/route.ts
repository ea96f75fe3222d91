import { getLiveness as op } from '@/server/http/operations/health';
import { json, route } from '@/server/http/route';
import { isDraining } from '@/server/web/shutdown';

export const dynamic = 'force-dynamic';

// GET: liveness only (no dependency checked): for process supervisors and load balancers, and the
// framework's own ceiling in the webhook and inbox benchmarks. 503 once the process is draining
// (server/cli/web-server.ts), so the balancer stops sending it requests. `detail` keeps the body
// valid as the documented error shape.
export const GET = route(op, async () =>
  isDraining() ? json(503, { status: 'draining', detail: 'This web process is shutting down' }) : { status: 'ok' as const },
);
