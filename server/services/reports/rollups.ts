import { sql, type SQL } from 'drizzle-orm';
import type { Channel } from '@/db/schema';
import type { Tx } from '@/server/db/client';
import { locationZones, reportZones, zoneRows, type LocationZone, type ReportZones } from './zones';

/**
 * Reports' rollups (db/schema/report-rollups.ts, docs/architecture.md#reports): per-day counts and
 * per-day and per-week histograms, kept from the changes of the rows they sum — every row the recount
 * removes counts −1 and every row it writes +1, in the recount's transaction — so they are exact
 * whatever order events come in and whatever a recount rewrites.
 *
 * Every writer of a business's report rows (the handler, the backfill) first takes the business's
 * lock here, so the state (which zones, built or not) and the rows cannot move under it. A business
 * whose zones changed, or whose rows predate the rollups, is not ready: its reports read the rows
 * themselves, and the backfill counts the rollups again from the rows, a stretch of time per
 * transaction (built_until); meanwhile the handler adds what it changes before that point, and the
 * backfill reads the rest as the handler left it.
 */

/** A namespace for the reports' advisory locks (with the business id). */
const LOCK_NAMESPACE = 4243;

/** A business's rollups: the zones they are counted in, whether every row is in them, and while not, up to when the backfill has counted. */
export type Rollups = { zones: ReportZones; ready: boolean; builtUntil: string | null };

type StoredState = { zones: string; ready: boolean; built_until: string | null };

/**
 * Takes the business's reports lock (until the transaction ends) and answers its rollups' state. A
 * business seen for the first time starts ready (nothing to count yet: every report row is written
 * after this); one whose zones changed is no longer ready and must be counted again.
 */
export async function openRollups(businessId: number, tx: Tx): Promise<Rollups> {
  await tx.execute(sql`select pg_advisory_xact_lock(${LOCK_NAMESPACE}, ${businessId})`);
  const [row] = await tx.execute<{
    zone: string | null;
    locations: LocationZone[];
    state: StoredState | null;
  }>(sql`
    select b.timezone as zone,
      ${locationZones(sql`b.id`)} as locations,
      (select json_build_object('zones', r.zones, 'ready', r.ready, 'built_until', r.built_until)
        from report_rollups r where r.business_id = b.id) as state
    from businesses b where b.id = ${businessId}`);
  if (!row) throw new Error(`business ${businessId} not found`);
  const zones = reportZones(row.zone, row.locations);
  if (!row.state) {
    await tx.execute(sql`insert into report_rollups (business_id, zones, ready) values (${businessId}, ${zones.key}, true)`);
    return { zones, ready: true, builtUntil: null };
  }
  if (row.state.zones !== zones.key) return setRollupState(businessId, zones, { ready: false, builtUntil: null }, tx);
  return { zones, ready: row.state.ready, builtUntil: row.state.built_until };
}

export async function setRollupState(
  businessId: number,
  zones: ReportZones,
  state: { ready: boolean; builtUntil: string | null },
  tx: Tx,
): Promise<Rollups> {
  await tx.execute(sql`
    update report_rollups set zones = ${zones.key}, ready = ${state.ready}, built_until = ${state.builtUntil}::timestamptz,
      updated_at = now()
    where business_id = ${businessId}`);
  return { zones, ...state };
}

/** Deletes up to `limit` of the business's rollup rows (the backfill empties them before counting again); answers how many. */
export async function deleteRollupRows(businessId: number, limit: number, tx: Tx): Promise<number> {
  const rows = await tx.execute<{ n: number }>(sql`
    with h as (
      delete from report_histograms where ctid = any(array(
        select ctid from report_histograms where business_id = ${businessId} limit ${limit}))
      returning 1
    ), d as (
      delete from report_day_counts where ctid = any(array(
        select ctid from report_day_counts where business_id = ${businessId} limit ${limit}))
      returning 1
    ), s as (
      delete from report_period_stats where ctid = any(array(
        select ctid from report_period_stats where business_id = ${businessId} limit ${limit}))
      returning 1
    )
    select ((select count(*) from h) + (select count(*) from d) + (select count(*) from s))::int as n`);
  return rows[0]!.n;
}

/** A time figure's value removed (−1) or written (+1): dated, with the dimensions it is reported by. */
export type ValueDelta = {
  figure: 'first_response' | 'reply' | 'resolution';
  sign: number;
  at: string;
  location_id: number | null;
  staff_id: number | null;
  channel: 'sms' | 'email';
  seconds: number;
  business_seconds: number;
};

/** A count removed or written: a cycle opened or resolved, a message in or out. */
export type CountDelta = {
  kind: 'opened' | 'resolved' | 'in' | 'out';
  sign: number;
  at: string;
  location_id: number | null;
  staff_id: number | null;
  channel: Channel;
};

/** Sums equal deltas: a recount rewriting a row as it was leaves nothing to write. */
export function netted<T extends { sign: number }>(deltas: readonly T[]): T[] {
  const byKey = new Map<string, T>();
  for (const d of deltas) {
    const key = JSON.stringify({ ...d, sign: 0 });
    const found = byKey.get(key);
    if (found) found.sign += d.sign;
    else byKey.set(key, { ...d });
  }
  return [...byKey.values()].filter((d) => d.sign !== 0);
}

/**
 * Adds the deltas to the rollups: all of them when they are ready; while the backfill counts them
 * again, those dated before where it got (it counts the rest from the rows themselves); none before it starts.
 */
export async function applyRollupDeltas(
  businessId: number,
  rollups: Rollups,
  values: readonly ValueDelta[],
  counts: readonly CountDelta[],
  tx: Tx,
): Promise<void> {
  if (!rollups.ready && rollups.builtUntil === null) return;
  const counted = rollups.ready ? sql`true` : sql`d.at < ${rollups.builtUntil}::timestamptz`;
  const rows = (deltas: readonly unknown[], columns: string) =>
    sql`select * from jsonb_to_recordset(${JSON.stringify(deltas)}::jsonb) as d(${sql.raw(columns)}) where ${counted}`;
  const v = netted(values);
  if (v.length) {
    const columns =
      'figure text, sign int, at timestamptz, location_id int, staff_id int, channel text, seconds float8, business_seconds float8';
    await addValues(businessId, rollups.zones, rows(v, columns), tx);
  }
  const c = netted(counts);
  if (c.length) {
    await addCounts(
      businessId,
      rollups.zones,
      rows(c, 'kind text, sign int, at timestamptz, location_id int, staff_id int, channel text'),
      tx,
    );
  }
}

/**
 * Counts again the exact figures (report_period_stats) of the days given (`days`: SQL with a `day`
 * column, dates in the business's zone) and of their weeks, from those periods' rows.
 */
export async function countDayStats(businessId: number, zones: ReportZones, days: SQL, tx: Tx): Promise<void> {
  const zone = zones.business;
  const periods = sql`
    select distinct false as week, day as period, day::timestamp at time zone ${zone} as lo,
      (day + 1)::timestamp at time zone ${zone} as hi from (${days}) d
    union
    select distinct true, date_trunc('week', day)::date, date_trunc('week', day)::timestamp at time zone ${zone},
      (date_trunc('week', day) + interval '7 days')::timestamp at time zone ${zone} from (${days}) d`;
  await tx.execute(sql`
    delete from report_period_stats s using (${periods}) p
    where s.business_id = ${businessId} and s.week = p.week and s.period = p.period`);
  await tx.execute(sql`
    with p as (${periods}), v as (
      select p.week, p.period, 'first_response' as figure, r.first_response_seconds as s, r.first_response_business_seconds as bs
      from p join report_cycles r on r.business_id = ${businessId} and r.started_at >= p.lo and r.started_at < p.hi
      where r.first_response_seconds is not null
      union all
      select p.week, p.period, 'resolution', r.resolution_seconds, r.resolution_business_seconds
      from p join report_cycles r on r.business_id = ${businessId} and r.started_at >= p.lo and r.started_at < p.hi
      where r.resolution_seconds is not null
      union all
      select p.week, p.period, 'reply', r.seconds, r.business_seconds
      from p join report_replies r on r.business_id = ${businessId} and r.waiting_since >= p.lo and r.waiting_since < p.hi
    )
    insert into report_period_stats (business_id, week, period, figure, count, median_seconds, p90_seconds,
      median_business_seconds, p90_business_seconds)
    select ${businessId}, week, period, figure, count(*)::int, percentile_cont(0.5) within group (order by s),
      percentile_cont(0.9) within group (order by s), percentile_cont(0.5) within group (order by bs),
      percentile_cont(0.9) within group (order by bs)
    from v group by week, period, figure order by week, period, figure`);
}

/** The days (in the business's zone) of the values of some deltas (netted: only those whose figures changed). */
export const daysOf = (zones: ReportZones, values: readonly ValueDelta[]): SQL =>
  sql`select distinct (d.at at time zone ${zones.business})::date as day
    from jsonb_to_recordset(${JSON.stringify(netted(values).map((v) => ({ at: v.at })))}::jsonb) as d(at timestamptz)`;

/** Counts the rows dated in [from, to) into the rollups (the backfill, a stretch of time per transaction). */
export async function countRowsInto(businessId: number, rollups: Rollups, from: string, to: string, tx: Tx): Promise<void> {
  const dated = (at: SQL) => sql`business_id = ${businessId} and ${at} >= ${from}::timestamptz and ${at} < ${to}::timestamptz`;
  const values = sql`
    select 'first_response' as figure, 1 as sign, started_at as at, location_id, first_reply_staff_id as staff_id, channel,
      first_response_seconds as seconds, first_response_business_seconds as business_seconds
    from report_cycles where ${dated(sql`started_at`)} and first_response_seconds is not null
    union all
    select 'resolution', 1, started_at, location_id, resolved_by_staff_id, channel, resolution_seconds, resolution_business_seconds
    from report_cycles where ${dated(sql`started_at`)} and resolution_seconds is not null
    union all
    select 'reply', 1, waiting_since, location_id, staff_id, channel, seconds, business_seconds
    from report_replies where ${dated(sql`waiting_since`)}`;
  await addValues(businessId, rollups.zones, values, tx);
  await addCounts(
    businessId,
    rollups.zones,
    sql`
      select 'opened' as kind, 1 as sign, started_at as at, location_id, null::int as staff_id, channel
      from report_cycles where ${dated(sql`started_at`)}
      union all
      select 'resolved', 1, resolved_at, location_id, resolved_by_staff_id, channel
      from report_cycles where ${dated(sql`resolved_at`)}
      union all
      select case when inbound then 'in' else 'out' end, 1, sent_at, location_id, staff_id, channel
      from report_messages where ${dated(sql`sent_at`)}`,
    tx,
  );
  // The days with values in the stretch, each counted whole (a day across two stretches twice: the second has it all).
  await countDayStats(
    businessId,
    rollups.zones,
    sql`select distinct (v.at at time zone ${rollups.zones.business})::date as day from (${values}) v`,
    tx,
  );
}

const zoneSql = (zones: ReportZones) =>
  sql`jsonb_to_recordset(${JSON.stringify(zoneRows(zones))}::jsonb) as z(local boolean, location_id int, zone text)`;

/**
 * Adds time figures (`source`: figure, sign, at, location_id, staff_id, channel, seconds,
 * business_seconds) to the histograms of every zone they are counted in: a row of a location with its
 * own zone also in that zone (only where the location is kept). Days and weeks are computed here, in
 * SQL, as reports compute them (./read.ts).
 */
async function addValues(businessId: number, zones: ReportZones, source: SQL, tx: Tx): Promise<void> {
  await tx.execute(sql`
    with d as (${source}), e as (
      select z.local, x.dims, w.week,
        case when w.week then date_trunc('week', d.at at time zone z.zone)::date else (d.at at time zone z.zone)::date end as period,
        d.figure, u.business,
        case when x.dims & 1 = 1 then coalesce(d.location_id, 0) else 0 end as location_id,
        case when x.dims & 2 = 2 then coalesce(d.staff_id, 0) else 0 end as staff_id,
        case when x.dims & 4 = 4 then d.channel else '' end as channel,
        report_bucket(case when u.business then d.business_seconds else d.seconds end) as bucket,
        d.sign
      from d
      join ${zoneSql(zones)} on not z.local or z.location_id = d.location_id
      cross join (values (false), (true)) as u(business)
      cross join (values (false), (true)) as w(week)
      cross join unnest(array[0, 1, 2, 4, 7]::smallint[]) as x(dims)
      -- All three dimensions by week only; in a location's own zone, only what keeps the location.
      where (w.week or x.dims <> 7) and (not z.local or x.dims & 1 = 1)
    )
    insert into report_histograms as h (business_id, local, dims, week, period, figure, business, location_id, staff_id, channel, bucket, n)
    select ${businessId}, local, dims, week, period, figure, business, location_id, staff_id, channel, bucket, sum(sign)::int
    from e group by local, dims, week, period, figure, business, location_id, staff_id, channel, bucket
    having sum(sign) <> 0
    order by local, dims, week, period, figure, business, location_id, staff_id, channel, bucket
    on conflict (business_id, local, dims, week, period, figure, business, location_id, staff_id, channel, bucket)
    do update set n = h.n + excluded.n`);
}

/** Adds counts (`source`: kind, sign, at, location_id, staff_id, channel) to the day counts of every zone they are counted in. */
async function addCounts(businessId: number, zones: ReportZones, source: SQL, tx: Tx): Promise<void> {
  await tx.execute(sql`
    with d as (${source}), e as (
      select z.local, (d.at at time zone z.zone)::date as day, coalesce(d.location_id, 0) as location_id,
        coalesce(d.staff_id, 0) as staff_id, d.channel, d.kind, d.sign
      from d join ${zoneSql(zones)} on not z.local or z.location_id = d.location_id
    )
    insert into report_day_counts as c (business_id, local, day, location_id, staff_id, channel, opened, resolved, messages_in, messages_out)
    select ${businessId}, local, day, location_id, staff_id, channel,
      coalesce(sum(sign) filter (where kind = 'opened'), 0)::int, coalesce(sum(sign) filter (where kind = 'resolved'), 0)::int,
      coalesce(sum(sign) filter (where kind = 'in'), 0)::int, coalesce(sum(sign) filter (where kind = 'out'), 0)::int
    from e group by local, day, location_id, staff_id, channel
    having sum(sign) filter (where kind = 'opened') <> 0 or sum(sign) filter (where kind = 'resolved') <> 0
      or sum(sign) filter (where kind = 'in') <> 0 or sum(sign) filter (where kind = 'out') <> 0
    order by local, day, location_id, staff_id, channel
    on conflict (business_id, local, day, location_id, staff_id, channel) do update set
      opened = c.opened + excluded.opened, resolved = c.resolved + excluded.resolved,
      messages_in = c.messages_in + excluded.messages_in, messages_out = c.messages_out + excluded.messages_out`);
}
