import { describe, expect, it } from 'vitest';
import { retryDelayMs, retryQuery } from './retry';

describe('the inbox reads retry', () => {
  it('tries a passing failure three more times, a final answer never', () => {
    const passing = [
      new Error('fetch failed'),
      { data: { code: 'SERVICE_UNAVAILABLE' } },
      { data: { code: 'INTERNAL_SERVER_ERROR' } },
      { data: null },
    ];
    for (const error of passing) {
      expect([0, 1, 2, 3].map((n) => retryQuery(n, error))).toEqual([true, true, true, false]);
    }
    for (const code of ['UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'BAD_REQUEST', 'UNPROCESSABLE_CONTENT'])
      expect(retryQuery(0, { data: { code } }), code).toBe(false);
  });

  it('waits 0.5, 1 and 2 s between tries', () => {
    expect([0, 1, 2, 3, 10].map(retryDelayMs)).toEqual([500, 1000, 2000, 4000, 4000]);
  });
});
