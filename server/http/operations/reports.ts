import { businessPath } from '@/server/schemas/common';
import { ReportQuery, ReportResponse, reportPath } from '@/server/schemas/reports';
import { defineOperation } from '../operation';

const common = { tag: 'reports', auth: 'any' as const };
const WHO =
  'A staff session without the owner or manager role sees only its own figures: `staff_id` is its own (naming another staff member is a 403). An API key sees every figure. Definitions: docs/api.md#reports.';

export const getReport = defineOperation({
  operationId: 'getReport',
  method: 'get',
  path: '/businesses/{business_id}/reports/{report}',
  summary: 'A report: response times, volume, calls or deliverability, with medians, p90 and counts per group',
  description: `Figures over [from, to) (at most 366 days), by day or week in the location’s time zone (the business’s without \`location_id\`), staff, location or channel. ${WHO}`,
  params: reportPath,
  query: ReportQuery,
  response: ReportResponse,
  errors: [403, 404],
  ...common,
});

export const exportReport = defineOperation({
  operationId: 'exportReport',
  method: 'get',
  path: '/businesses/{business_id}/reports/export',
  summary: 'Every conversation cycle of a range as CSV, one row per cycle with every figure, streamed',
  description: `The same filters as the reports (\`group_by\` is ignored). Rows arrive as they are read; there is no Content-Length. ${WHO}`,
  params: businessPath,
  query: ReportQuery,
  binaryResponse: ['text/csv'],
  errors: [403, 404],
  ...common,
});
