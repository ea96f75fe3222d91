import { sql, type SQL } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { addTo, countOf, interpolate, locate, PERCENTILES, ranksOf, type Histogram } from './percentiles';
import {
  envelope,
  groupsOf,
  inSnapshot,
  periodsOf,
  range,
  rawKey,
  reportScope,
  rollupFilters,
  rollupKey,
  rowFilters,
  split,
  type Periods,
  type ReportQuery,
  type ReportScope,
  type Stats,
} from './query';

/**
 * The response-times report (docs/api.md#reports): first response, reply and resolution times,
 * count, median and p90 in wall and business seconds, in total and per group — PostgreSQL's
 * `percentile_cont`, exact, without sorting every value. The histograms (db/schema/report-rollups.ts)
 * for the whole days and weeks of the range, and the rows for the rest, say which bucket each rank
 * falls in and where (./percentiles.ts); then one ordered index scan per bucket reads the values up
 * to that rank. By day or by week without filters, the whole periods' figures are kept exact
 * (report_period_stats). Both reads run in one snapshot, so the histograms and the values agree.
 */

type Figure = 'first_response' | 'reply' | 'resolution';
const FIGURES: Record<Figure, { table: SQL; at: SQL; staff: SQL; wall: SQL; business: SQL }> = {
  first_response: {
    table: sql.raw('report_cycles'),
    at: sql.raw('r.started_at'),
    staff: sql.raw('r.first_reply_staff_id'),
    wall: sql.raw('r.first_response_seconds'),
    business: sql.raw('r.first_response_business_seconds'),
  },
  reply: {
    table: sql.raw('report_replies'),
    at: sql.raw('r.waiting_since'),
    staff: sql.raw('r.staff_id'),
    wall: sql.raw('r.seconds'),
    business: sql.raw('r.business_seconds'),
  },
  resolution: {
    table: sql.raw('report_cycles'),
    at: sql.raw('r.started_at'),
    staff: sql.raw('r.resolved_by_staff_id'),
    wall: sql.raw('r.resolution_seconds'),
    business: sql.raw('r.resolution_business_seconds'),
  },
};
const UNITS = [false, true] as const;

/** The dimensions a report needs kept: those it filters on and the one it groups by (1 location, 2 staff, 4 channel). */
function dimsOf(q: ReportQuery): number {
  const dims =
    (q.location_id !== undefined || q.group_by === 'location' ? 1 : 0) |
    (q.staff_id !== undefined || q.group_by === 'staff' ? 2 : 0) |
    (q.channel !== undefined || q.group_by === 'channel' ? 4 : 0);
  // Two or three dimensions: the histograms keep all three (by week only).
  return dims === 0 || dims === 1 || dims === 2 || dims === 4 ? dims : 7;
}

type Selection = { figure: Figure; business: boolean; key: string | null; total: boolean };
const unitId = (figure: Figure, business: boolean) => `${figure}/${business}`;
const selectionId = (s: Selection) => `${unitId(s.figure, s.business)}/${s.total ? '*' : s.key}`;
const VARIANTS = (Object.keys(FIGURES) as Figure[]).flatMap((figure) =>
  UNITS.map((business) => ({
    figure,
    business,
    f: FIGURES[figure],
    value: business ? FIGURES[figure].business : FIGURES[figure].wall,
  })),
);

/** How one report reads: its query, its zone and the rollups it uses. */
type Plan = {
  businessId: number;
  q: ReportQuery;
  tz: string;
  local: boolean;
  dims: number;
  use: Periods;
  /** By day or by week without filters: the whole periods' figures are read as kept (report_period_stats). */
  kept: boolean;
};

function planOf(businessId: number, q: ReportQuery, scope: ReportScope): Plan {
  const dims = dimsOf(q);
  const daily = dims !== 7;
  const kept = (q.group_by === 'day' || q.group_by === 'week') && dims === 0 && scope.rollups && !scope.local;
  const use: Periods = !scope.rollups
    ? { days: false, weeks: false }
    : q.group_by === 'day' && !kept
      ? { days: daily, weeks: false }
      : { days: daily, weeks: true };
  return { businessId, q, tz: scope.timeZone, local: scope.local, dims, use, kept };
}

const keyOfRow = (p: Plan, f: (typeof FIGURES)[Figure]) =>
  rawKey(p.q.group_by, f.at, p.tz, { staff: f.staff, location: sql`r.location_id`, channel: sql`r.channel` });

type Histograms = Map<string, { total: Histogram; groups: Map<string | null, Histogram> }>;

/**
 * Each figure's histogram per group and in total (the groups' sum): the rollups' for the whole days
 * and weeks, the rows' for the rest of the range, added up here. With `kept`, the whole periods'
 * figures as kept, and the rollups give only the total (and the cut periods at either end their groups).
 */
async function readHistograms(p: Plan, tx: Tx) {
  const { businessId, q } = p;
  // A rollup row's group: none for the periods kept whole (their row in report_period_stats has it).
  const grouped = (week: boolean) => !p.kept || (q.group_by === 'week' && !week);
  const parts = [
    ...periodsOf(p.use, sql`h.period`).map((periods, i) => {
      const week = p.use.weeks && i === 0;
      const where = sql`h.business_id = ${businessId} and h.local = ${p.local} and h.dims = ${p.dims} and h.week = ${week}
        and ${periods} ${rollupFilters(q)}`;
      // By day, a day's rows are its histogram as they are (one per bucket): nothing to add up.
      return q.group_by === 'day' && grouped(week)
        ? sql`select h.figure, h.business, h.period::text as key, h.bucket, h.n, true as grouped
            from span, report_histograms h where ${where}`
        : sql`select h.figure, h.business, ${rollupKey(grouped(week) ? q.group_by : undefined, sql`h.period`)} as key,
              h.bucket, sum(h.n)::int as n, ${grouped(week)} as grouped
            from span, report_histograms h where ${where} group by 1, 2, 3, 4`;
    }),
    ...VARIANTS.map(
      ({ figure, business, f, value }) => sql`
        select ${figure}::text as figure, ${business} as business, ${keyOfRow(p, f)} as key, report_bucket(${value}) as bucket,
          count(*)::int as n, true as grouped
        from ${f.table} r join raw_ranges x on ${f.at} >= x.lo and ${f.at} < x.hi
        where r.business_id = ${businessId} and ${value} is not null ${rowFilters(q, f.staff)}
        group by 1, 2, 3, 4`,
    ),
  ];
  const counts = await tx.execute<{
    figure: Figure;
    business: boolean;
    key: string | null;
    bucket: number;
    n: number;
    grouped: boolean;
  }>(sql`with ${split(q, p.tz, p.use)} ${sql.join(parts, sql` union all `)}`);
  const whole = p.kept
    ? await tx.execute<Stats & { figure: Figure; key: string }>(sql`
        with ${split(q, p.tz, p.use)}
        select s.period::text as key, s.figure, s.count, s.median_seconds, s.p90_seconds, s.median_business_seconds,
          s.p90_business_seconds
        from span, report_period_stats s
        where s.business_id = ${businessId} and s.week = ${q.group_by === 'week'}
          and s.period between ${q.group_by === 'week' ? sql`span.w0 and span.w1` : sql`span.d0 and span.d1`}`)
    : [];
  const histograms: Histograms = new Map();
  for (const c of counts) {
    if (c.n === 0) continue;
    const unit = unitId(c.figure, c.business);
    let found = histograms.get(unit);
    if (!found) histograms.set(unit, (found = { total: new Map(), groups: new Map() }));
    addTo(found.total, c.bucket, c.n);
    if (q.group_by && c.grouped) {
      let group = found.groups.get(c.key);
      if (!group) found.groups.set(c.key, (group = new Map()));
      addTo(group, c.bucket, c.n);
    }
  }
  return { histograms, whole: new Map(whole.map((k) => [`${k.figure}/${k.key}`, k])) };
}

type Wanted = Selection & { bucket: number; n: number; o: number; c: number };

/** Of each bucket a rank falls in, the ranks wanted: the lowest (`o`) and how many from it (`c`). */
function wantedRanks(histograms: Histograms): Wanted[] {
  const wanted = new Map<string, Wanted>();
  const want = (selection: Selection, histogram: Histogram) => {
    const n = countOf(histogram);
    for (const p of Object.values(PERCENTILES)) {
      const ranks = ranksOf(p, n);
      for (const rank of [ranks.lo, ranks.hi]) {
        const { bucket, offset } = locate(histogram, rank);
        const id = `${selectionId(selection)}#${bucket}`;
        const found = wanted.get(id);
        const lo = Math.min(found?.o ?? offset, offset);
        const hi = Math.max(found ? found.o + found.c - 1 : offset, offset);
        wanted.set(id, { ...selection, bucket, n: histogram.get(bucket)!, o: lo, c: hi - lo + 1 });
      }
    }
  };
  for (const { figure, business } of VARIANTS) {
    const found = histograms.get(unitId(figure, business));
    if (!found) continue;
    want({ figure, business, key: null, total: true }, found.total);
    for (const [key, histogram] of found.groups) want({ figure, business, key, total: false }, histogram);
  }
  return [...wanted.values()];
}

/**
 * The values at the ranks wanted: one ordered index scan per bucket (index-only: the bucket, then
 * the value), stopped at the last rank it wants. A day's or a week's group is its own time (its
 * first instant in the zone to the next's), another group its column. Keyed by selection and bucket.
 */
async function readRanks(p: Plan, requests: readonly Wanted[], tx: Tx): Promise<Map<string, Map<number, number>>> {
  const values = new Map<string, Map<number, number>>();
  if (requests.length === 0) return values;
  const { businessId, q } = p;
  const { from, to } = range(q);
  const span = q.group_by === 'day' ? 1 : q.group_by === 'week' ? 7 : 0;
  const bounds = span
    ? sql`case when w.total then ${from} else greatest(${from}, w.key::date::timestamp at time zone ${p.tz}) end as lo,
          case when w.total then ${to} else least(${to}, (w.key::date + ${span}::int)::timestamp at time zone ${p.tz}) end as hi`
    : sql`${from} as lo, ${to} as hi`;
  const groupMatch = (f: (typeof FIGURES)[Figure]) =>
    q.group_by === 'staff'
      ? sql`${f.staff} is not distinct from w.key::int`
      : q.group_by === 'location'
        ? sql`r.location_id is not distinct from w.key::int`
        : q.group_by === 'channel'
          ? sql`r.channel = w.key`
          : sql`true`;
  const rows = await tx.execute<{ i: number; value: number }>(sql`
    with w as (
      select w.*, ${bounds}
      from jsonb_to_recordset(${JSON.stringify(requests.map((r, i) => ({ ...r, i })))}::jsonb)
        as w(i int, figure text, business boolean, bucket int, total boolean, key text, o int, c int)
    )
    ${sql.join(
      VARIANTS.map(
        ({ figure, business, f, value }) => sql`
          select w.i, v.value from w cross join lateral (
            select ${value} as value from ${f.table} r
            where r.business_id = ${businessId} and report_bucket(${value}) = w.bucket and ${value} is not null
              and ${f.at} >= w.lo and ${f.at} < w.hi ${rowFilters(q, f.staff)} and (w.total or ${groupMatch(f)})
            order by ${value} offset w.o limit w.c
          ) v
          where w.figure = ${figure} and w.business = ${business}`,
      ),
      sql` union all `,
    )}`);
  const byRequest = new Map<number, number[]>();
  for (const r of rows) {
    const list = byRequest.get(r.i) ?? [];
    list.push(r.value);
    byRequest.set(r.i, list);
  }
  requests.forEach((r, i) => {
    const got = (byRequest.get(i) ?? []).sort((a, b) => a - b);
    // The histograms and the rows are one snapshot: a bucket holds the values it counts, so every rank wanted is there.
    if (got.length !== r.c) {
      throw new Error(
        `report histogram of ${selectionId(r)} counts ${r.n} in bucket ${r.bucket}: ranks read ${got.length} of ${r.c}`,
      );
    }
    values.set(`${selectionId(r)}#${r.bucket}`, new Map(got.map((v, k) => [r.o + k, v])));
  });
  return values;
}

/**
 * First response, reply and resolution times: count, median and p90 in wall and business seconds,
 * in total and per group.
 */
export async function responseTimesReport(businessId: number, q: ReportQuery, tx: Tx = db) {
  const scope = await reportScope(businessId, q, tx);
  const p = planOf(businessId, q, scope);
  const { histograms, whole, values } = await inSnapshot(async (tx) => {
    const read = await readHistograms(p, tx);
    return { ...read, values: await readRanks(p, wantedRanks(read.histograms), tx) };
  }, tx);

  const statsOf = (figure: Figure, key: string | null, total: boolean): Stats => {
    const period = total ? undefined : whole.get(`${figure}/${key}`);
    if (period) {
      return {
        count: period.count,
        median_seconds: period.median_seconds,
        p90_seconds: period.p90_seconds,
        median_business_seconds: period.median_business_seconds,
        p90_business_seconds: period.p90_business_seconds,
      };
    }
    const percentile = (business: boolean, pct: number): { n: number; value: number | null } => {
      const selection = { figure, business, key, total };
      const unit = histograms.get(unitId(figure, business));
      const histogram = total ? unit?.total : unit?.groups.get(key);
      if (!histogram) return { n: 0, value: null };
      const n = countOf(histogram);
      const ranks = ranksOf(pct, n);
      const at = (rank: number) => {
        const { bucket, offset } = locate(histogram, rank);
        const value = values.get(`${selectionId(selection)}#${bucket}`)?.get(offset);
        if (value === undefined) throw new Error(`report rank ${rank} of ${selectionId(selection)} not read`);
        return value;
      };
      return { n, value: interpolate(ranks, at(ranks.lo), at(ranks.hi)) };
    };
    const median = percentile(false, PERCENTILES.median);
    return {
      count: median.n,
      median_seconds: median.value,
      p90_seconds: percentile(false, PERCENTILES.p90).value,
      median_business_seconds: percentile(true, PERCENTILES.median).value,
      p90_business_seconds: percentile(true, PERCENTILES.p90).value,
    };
  };
  const block = (key: string | null, total: boolean) => ({
    first_response: statsOf('first_response', key, total),
    reply: statsOf('reply', key, total),
    resolution: statsOf('resolution', key, total),
  });
  const keys = [...[...histograms.values()].flatMap((h) => [...h.groups.keys()]), ...[...whole.values()].map((k) => k.key)];
  return envelope(
    'response-times' as const,
    businessId,
    q,
    scope,
    block(null, true),
    groupsOf(q, keys, (k) => block(k, false)),
  );
}
