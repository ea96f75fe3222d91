import type { z } from 'zod';
import { db, type Tx } from '@/server/db/client';
import type { ReportResponse } from '@/server/schemas/reports';
import type { Caller } from '@/server/services/auth';
import type { ReportName } from '@/server/shared/reports';
import { scopedQuery } from './access';
import { callsReport, deliverabilityReport, responseTimesReport, volumeReport, type ReportQuery } from './read';

export { scopedQuery, seesEveryFigure } from './access';
export { csvField, EXPORT_COLUMNS, exportCycles } from './export';

/** A report's answer, as the contract documents it (server/schemas/reports.ts): one shape per report. */
export type ReportAnswer = z.output<typeof ReportResponse>;

export async function getReport(
  caller: Caller,
  businessId: number,
  report: ReportName,
  query: ReportQuery,
  tx: Tx = db,
): Promise<ReportAnswer> {
  const q = await scopedQuery(caller, businessId, query, tx);
  // read.ts types two figures more loosely than the contract (a volume's `messages` as
  // Record<string, number>, an opt-out's `channel` as a string): rest.test.ts parses every report's
  // answer with ReportResponse, so this assertion is held by a test.
  switch (report) {
    case 'response-times':
      return responseTimesReport(businessId, q, tx);
    case 'volume':
      return (await volumeReport(businessId, q, tx)) as ReportAnswer;
    case 'calls':
      return callsReport(businessId, q, tx);
    case 'deliverability':
      return (await deliverabilityReport(businessId, q, tx)) as ReportAnswer;
  }
}
