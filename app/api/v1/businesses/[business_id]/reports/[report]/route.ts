import { getReport as op } from '@/server/http/operations/reports';
import { route } from '@/server/http/route';
import { getReport } from '@/server/services/reports';

// GET: one report's figures (docs/api.md#reports).
export const GET = route(op, ({ caller, params, query, tx }) => getReport(caller, params.business_id, params.report, query, tx));
