import { describe, expect, it } from 'vitest';
import { retryDelayMs, retryQuery, retrySubscription, subscriptionRetryDelayMs } from './retry';

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

describe('the live events stream retry', () => {
  it('reopens a stream that failed for a passing reason, never one superseded by another tab or signed out', () => {
    for (const error of [
      new Error('fetch failed'),
      { data: { code: 'SERVICE_UNAVAILABLE' } },
      { data: { code: 'TOO_MANY_REQUESTS' } }, // the business's streams were full: try again later
      { data: null },
    ])
      expect(retrySubscription(error)).toBe(true);
    for (const code of ['UNAUTHORIZED', 'FORBIDDEN', 'CONFLICT']) expect(retrySubscription({ data: { code } }), code).toBe(false);
  });

  it('waits 1 s, then twice as long each time, up to 15 s', () => {
    expect([1, 2, 3, 4, 5, 10].map(subscriptionRetryDelayMs)).toEqual([1000, 2000, 4000, 8000, 15_000, 15_000]);
  });
});
