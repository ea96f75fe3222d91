import { sql, type SQL } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { inReadSnapshot } from '@/server/db/snapshot';
import { AppError } from '@/server/errors';
import { MAX_REPORT_DAYS, type GroupBy, type REPORT_CHANNELS, type Stats } from '@/server/shared/reports';

export { MAX_REPORT_DAYS, type Stats };
import { locationZones, reportZones, zoneFor, type LocationZone } from './zones';

/**
 * What the reports (./read.ts, ./times.ts) share: the query and its scope (the zone, whether the
 * rollups can be read), how a range splits between the rollups (its whole days and weeks) and the
 * rows (the rest), the groups' keys and filters in SQL, and the answer's envelope.
 */

export type ReportQuery = {
  from: Date;
  to: Date;
  location_id?: number;
  staff_id?: number;
  channel?: (typeof REPORT_CHANNELS)[number];
  group_by?: GroupBy;
};

export type Key = string | number | null;

/** Where a report reads: the zone its days are in, whether that is a location's own, and whether the rollups can be read. */
export type ReportScope = { timeZone: string; local: boolean; rollups: boolean };

/**
 * Checks the filters against the business (422 at the field) and answers the zone days are read in
 * and whether the rollups are counted in the business's current zones: one statement.
 */
export async function reportScope(businessId: number, q: ReportQuery, tx: Tx = db): Promise<ReportScope> {
  if (!(q.to.getTime() > q.from.getTime())) throw AppError.invalid(['query', 'to'], 'must be after from');
  if (q.to.getTime() - q.from.getTime() > MAX_REPORT_DAYS * 86_400_000) {
    throw AppError.invalid(['query', 'to'], `the range may cover at most ${MAX_REPORT_DAYS} days`);
  }
  const [row] = await tx.execute<{
    zone: string | null;
    locations: LocationZone[];
    location_found: boolean;
    staff_found: boolean;
    ready_zones: string | null;
  }>(sql`
    select b.timezone as zone,
      ${locationZones(sql`b.id`)} as locations,
      ${q.location_id === undefined ? sql`true` : sql`exists (select 1 from locations where business_id = b.id and id = ${q.location_id})`} as location_found,
      -- Inactive staff keep their figures: any staff member of the business may be named.
      ${q.staff_id === undefined ? sql`true` : sql`exists (select 1 from staff where business_id = b.id and id = ${q.staff_id})`} as staff_found,
      (select r.zones from report_rollups r where r.business_id = b.id and r.ready) as ready_zones
    from businesses b where b.id = ${businessId}`);
  if (!row) throw AppError.notFound('Business');
  if (!row.location_found) throw AppError.invalid(['query', 'location_id'], 'is not a location of this business');
  if (!row.staff_found) throw AppError.invalid(['query', 'staff_id'], 'is not a staff member of this business');
  const zones = reportZones(row.zone, row.locations);
  const { zone, local } = zoneFor(zones, q.location_id);
  return { timeZone: zone, local, rollups: row.ready_zones === zones.key };
}

/**
 * The reports that read several statements read them in one snapshot (given the database itself: a
 * read-only repeatable-read transaction of their own), with room to group and rank in memory, and
 * planned for what they read: a few index ranges of rows in memory (the default costs chose a
 * parallel scan of every business's histograms over a range of one's: 160 ms against 50,
 * docs/performance.md#benchreports).
 */
export const inSnapshot = <T>(read: (tx: Tx) => Promise<T>, tx: Tx = db): Promise<T> =>
  inReadSnapshot(read, { work_mem: '64MB', random_page_cost: '1.1', max_parallel_workers_per_gather: '0' }, tx);

export const range = (q: ReportQuery) => ({
  from: sql`${q.from.toISOString()}::timestamptz`,
  to: sql`${q.to.toISOString()}::timestamptz`,
});

/** The rollups' periods a report reads: days, weeks (Monday first), both (weeks, and the days outside whole weeks), or none. */
export type Periods = { days: boolean; weeks: boolean };

/**
 * The common table expressions that split a range (in zone `tz`) between the rollups and the rows:
 * `span` — the first and last whole days inside it (d0, d1), the first and last Mondays of whole
 * weeks inside it (w0, w1), the dates the rollups answer (c0, c1; null when none) — and
 * `raw_ranges` (lo, hi): the rest of the range, read from the rows. A date's first instant is
 * `date::timestamp at time zone tz` (also across daylight-saving changes at midnight).
 */
export function split(q: ReportQuery, tz: string, use: Periods): SQL {
  const { from, to } = range(q);
  const covered = use.days ? sql`d0, d1` : use.weeks ? sql`w0, w1 + 6` : sql`null::date, null::date`;
  return sql`bounds as (
      select ((${from} - interval '1 microsecond') at time zone ${tz})::date + 1 as d0, (${to} at time zone ${tz})::date - 1 as d1
    ), weeks as (
      select d0, d1, d0 + (8 - extract(isodow from d0)::int) % 7 as w0, (d1 - 6) - (extract(isodow from d1 - 6)::int - 1) as w1
      from bounds
    ), span as (
      select d0, d1, w0, w1, case when c0 <= c1 then c0 end as c0, case when c0 <= c1 then c1 end as c1
      from weeks, lateral (select ${covered}) c(c0, c1)
    ), raw_ranges as (
      select ${from} as lo, coalesce(c0::timestamp at time zone ${tz}, ${to}) as hi from span
      union all
      select (c1 + 1)::timestamp at time zone ${tz}, ${to} from span where c1 is not null
    )`;
}

/**
 * Which rollup rows a report reads (their date column `period`, with `span` joined), each an index
 * range: the whole weeks, and the whole days before and after them (all whole days when it reads
 * days alone, or no whole week fits).
 */
export function periodsOf(use: Periods, period: SQL): SQL[] {
  const weeks = sql`span.w0 <= span.w1`;
  if (!use.days) return use.weeks ? [sql`${period} between span.w0 and span.w1`] : [];
  if (!use.weeks) return [sql`${period} between span.d0 and span.d1`];
  return [
    sql`${period} between span.w0 and span.w1`,
    sql`${period} between span.d0 and case when ${weeks} then span.w0 - 1 else span.d1 end`,
    sql`${period} between case when ${weeks} then span.w1 + 7 else span.d1 + 1 end and span.d1`,
  ];
}

/** A group's key as text: a day or a week's Monday (`YYYY-MM-DD`), an id, a channel; null for none. */
export function rawKey(g: GroupBy | undefined, at: SQL, tz: string, cols: { staff: SQL; location: SQL; channel: SQL }): SQL {
  switch (g) {
    case 'day':
      return sql`to_char(${at} at time zone ${tz}, 'YYYY-MM-DD')`;
    case 'week':
      return sql`to_char(date_trunc('week', ${at} at time zone ${tz}), 'YYYY-MM-DD')`;
    case 'staff':
      return sql`(${cols.staff})::text`;
    case 'location':
      return sql`(${cols.location})::text`;
    case 'channel':
      return sql`(${cols.channel})::text`;
    default:
      return sql`null::text`;
  }
}

/** The same key from a rollup row (dimensions kept as none are 0 or ''). */
export const rollupKey = (g: GroupBy | undefined, day: SQL) =>
  g === 'day' || g === 'week'
    ? sql`to_char(${g === 'week' ? sql`${day} - (extract(isodow from ${day})::int - 1)` : day}, 'YYYY-MM-DD')`
    : g === 'staff'
      ? sql`nullif(h.staff_id, 0)::text`
      : g === 'location'
        ? sql`nullif(h.location_id, 0)::text`
        : g === 'channel'
          ? sql`nullif(h.channel, '')`
          : sql`null::text`;

/** The filters on a rollup's dimensions (alias h; a dimension asked for is kept). */
export const rollupFilters = (q: ReportQuery, staff = sql`h.staff_id`) => sql`
  ${q.location_id !== undefined ? sql`and h.location_id = ${q.location_id}` : sql``}
  ${q.channel !== undefined ? sql`and h.channel = ${q.channel}` : sql``}
  ${q.staff_id !== undefined ? sql`and ${staff} = ${q.staff_id}` : sql``}`;

/** The filters on report rows (alias r), the staff column being the figure's. */
export const rowFilters = (q: ReportQuery, staff: SQL) => sql`
  ${q.location_id !== undefined ? sql`and r.location_id = ${q.location_id}` : sql``}
  ${q.channel !== undefined ? sql`and r.channel = ${q.channel}` : sql``}
  ${q.staff_id !== undefined ? sql`and ${staff} = ${q.staff_id}` : sql``}`;

const keyOut = (g: GroupBy | undefined, key: string | null): Key =>
  key === null ? null : g === 'staff' || g === 'location' ? Number(key) : key;

/** The groups' keys in order (nulls last), each with its figures. */
export function groupsOf<T>(q: ReportQuery, keys: Iterable<string | null>, one: (key: string | null) => T) {
  if (!q.group_by) return [];
  const numeric = q.group_by === 'staff' || q.group_by === 'location';
  return [...new Set(keys)]
    .sort((a, b) => (a === null ? 1 : b === null ? -1 : numeric ? Number(a) - Number(b) : a < b ? -1 : a > b ? 1 : 0))
    .map((k) => ({ key: keyOut(q.group_by, k), ...one(k) }));
}

/** A report's answer around its figures. */
export function envelope<R extends string, F>(
  report: R,
  businessId: number,
  q: ReportQuery,
  scope: ReportScope,
  total: F,
  groups: ({ key: Key } & F)[],
) {
  return {
    report,
    business_id: businessId,
    from: q.from.toISOString(),
    to: q.to.toISOString(),
    time_zone: scope.timeZone,
    group_by: q.group_by ?? null,
    total,
    groups,
  };
}
