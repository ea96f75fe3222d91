/**
 * Medians and p90 as PostgreSQL's `percentile_cont` gives them (docs/api.md#reports, Median and
 * p90), found without sorting every value: a histogram (bucket → how many values, buckets in the
 * values' order) says which bucket each rank falls in and where in it, and only that bucket's values
 * are read and sorted. Pure: ./read.ts reads the histograms and the buckets' values.
 */

/** The percentiles every time figure reports. */
export const PERCENTILES = { median: 0.5, p90: 0.9 } as const;

/** The 0-based ranks percentile_cont reads for `p` over `n` values (floor and ceiling of p·(n−1)) and the fraction between them. */
export function ranksOf(p: number, n: number): { lo: number; hi: number; fraction: number } {
  const r = p * (n - 1);
  const lo = Math.floor(r);
  return { lo, hi: Math.ceil(r), fraction: r - lo };
}

/** percentile_cont from the values at those ranks, as PostgreSQL computes it (float8_lerp: lo + fraction·(hi − lo)). */
export function interpolate(ranks: { lo: number; hi: number; fraction: number }, low: number, high: number): number {
  return ranks.hi === ranks.lo ? low : low + ranks.fraction * (high - low);
}

/** A histogram: how many values each bucket holds, in the values' order (a bucket is monotone in its values). */
export type Histogram = Map<number, number>;

/** A histogram's buckets in order, sorted once (a histogram is complete before it is read). */
const sorted = new WeakMap<Histogram, number[]>();

/** The bucket a 0-based rank falls in, and its rank among that bucket's values. */
export function locate(histogram: Histogram, rank: number): { bucket: number; offset: number } {
  let buckets = sorted.get(histogram);
  if (!buckets) sorted.set(histogram, (buckets = [...histogram.keys()].sort((a, b) => a - b)));
  let before = 0;
  for (const bucket of buckets) {
    const n = histogram.get(bucket)!;
    if (rank < before + n) return { bucket, offset: rank - before };
    before += n;
  }
  throw new RangeError(`rank ${rank} is past the histogram's ${before} values`);
}

export const countOf = (histogram: Histogram) => [...histogram.values()].reduce((a, b) => a + b, 0);

/** Adds `n` values of `bucket` to a histogram. */
export function addTo(histogram: Histogram, bucket: number, n: number): void {
  histogram.set(bucket, (histogram.get(bucket) ?? 0) + n);
}
