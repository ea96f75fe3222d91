import { describe, expect, it } from 'vitest';
import { MAX_REPORT_DAYS } from '@/server/shared/reports';
import { ReportQuery } from './reports';

/** The reports' range rule is the contract's (docs/api.md#reports, Endpoints): a 422 at `to`, stated in OpenAPI. */

const DAY = 86_400_000;
const from = '2026-01-01T00:00:00Z';
const plus = (ms: number) => new Date(Date.parse(from) + ms).toISOString();
const issues = (to: string) => {
  const r = ReportQuery.safeParse({ from, to });
  return r.success ? [] : r.error.issues.map((i) => ({ path: i.path, message: i.message }));
};

describe('ReportQuery: the range', () => {
  it(`takes up to ${MAX_REPORT_DAYS} days, refuses a longer or empty range at \`to\``, () => {
    expect(MAX_REPORT_DAYS).toBe(366);
    expect(issues(plus(1))).toEqual([]);
    expect(issues(plus(MAX_REPORT_DAYS * DAY))).toEqual([]);
    expect(issues(plus(MAX_REPORT_DAYS * DAY + 1))).toEqual([
      { path: ['to'], message: `the range may cover at most ${MAX_REPORT_DAYS} days` },
    ]);
    expect(issues(from)).toEqual([{ path: ['to'], message: 'must be after from' }]);
    expect(issues(plus(-DAY))).toEqual([{ path: ['to'], message: 'must be after from' }]);
  });

  it('says so where OpenAPI reads it: the description of `to`', () => {
    expect(ReportQuery.shape.to.description).toContain(`at most ${MAX_REPORT_DAYS} days later, else a 422 at \`to\``);
  });
});
