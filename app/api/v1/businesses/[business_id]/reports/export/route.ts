import { exportReport as op } from '@/server/http/operations/reports';
import { route } from '@/server/http/route';
import { exportCycles } from '@/server/services/reports';

// GET: every cycle of the range as CSV, streamed from a cursor (docs/api.md#reports).
export const GET = route(
  op,
  async ({ caller, params, query }) =>
    new Response(await exportCycles(caller, params.business_id, query), {
      headers: {
        'Content-Type': 'text/csv; charset=utf-8',
        'Content-Disposition': `attachment; filename="cycles-${params.business_id}.csv"`,
        'Cache-Control': 'no-store',
      },
    }),
);
