import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addTo, countOf, interpolate, locate, ranksOf, type Histogram } from './percentiles';

/** percentile_cont through a histogram and one bucket's values, against sorting every value. */

/** PostgreSQL's percentile_cont over all the values (orderedsetaggs.c: float8_lerp). */
function percentileCont(values: number[], p: number): number {
  const v = [...values].sort((a, b) => a - b);
  const r = p * (v.length - 1);
  const lo = Math.floor(r);
  const hi = Math.ceil(r);
  return hi === lo ? v[lo]! : v[lo]! + (r - lo) * (v[hi]! - v[lo]!);
}

describe('percentiles through a histogram', () => {
  it('equal percentile_cont exactly, whatever the buckets (monotone in the value)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1e7, noNaN: true }), { minLength: 1, maxLength: 300 }),
        fc.constantFrom(0.5, 0.9),
        fc.integer({ min: 1, max: 50 }),
        (values, p, width) => {
          const bucketOf = (v: number) => Math.floor(Math.log2(1 + v) * (64 / width));
          const histogram: Histogram = new Map();
          for (const v of values) addTo(histogram, bucketOf(v), 1);
          expect(countOf(histogram)).toBe(values.length);
          const ranks = ranksOf(p, values.length);
          const at = (rank: number) => {
            const { bucket, offset } = locate(histogram, rank);
            return values.filter((v) => bucketOf(v) === bucket).sort((a, b) => a - b)[offset]!;
          };
          expect(interpolate(ranks, at(ranks.lo), at(ranks.hi))).toBe(percentileCont(values, p));
        },
      ),
    );
  });

  it('a rank past the histogram is an error, not a guess', () => {
    const histogram: Histogram = new Map([[3, 2]]);
    expect(locate(histogram, 1)).toEqual({ bucket: 3, offset: 1 });
    expect(() => locate(histogram, 2)).toThrow(RangeError);
  });
});
