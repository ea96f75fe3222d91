import { sql, type SQL } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { AppError } from '@/server/errors';
import {
  envelope,
  groupsOf,
  periodsOf,
  range,
  rawKey,
  reportScope,
  rollupFilters,
  rollupKey,
  rowFilters,
  split,
  type ReportQuery,
  type Stats,
} from './query';

/**
 * The reports (docs/api.md#reports) but response times (./times.ts): volumes, summed from the
 * per-day counts the `reports` handler keeps (db/schema/report-rollups.ts) for the whole days of a
 * range and from the rows for the rest (the partial days at either end, or the whole range when the
 * rollups are not ready: ./rollups.ts); calls and deliverability, from their own small tables and
 * partial indexes.
 */

export { MAX_REPORT_DAYS, reportScope, type ReportQuery, type ReportScope, type Stats } from './query';
export { responseTimesReport } from './times';

const MESSAGE_NAMES = ['sms_in', 'sms_out', 'email_in', 'email_out', 'voice_in', 'voice_out'] as const;
type VolumeRow = { key: string | null; opened: number; resolved: number } & Record<(typeof MESSAGE_NAMES)[number], number>;

/** The six message counts: `count(channel, inbound)` is what to sum for one of them. */
const messageCounts = (count: (channel: string, inbound: boolean) => SQL) =>
  sql.join(
    MESSAGE_NAMES.map((n) => {
      const [channel, dir] = n.split('_') as [string, string];
      return sql`${count(channel, dir === 'in')} as ${sql.raw(n)}`;
    }),
    sql`, `,
  );

/**
 * Volumes: cycles opened (by when they started) and resolved (by when they were resolved), and
 * messages in and out per channel (texts, emails and calls; notes are not messages to a client).
 * `staff_id`: cycles resolved by them, messages they sent (opened and inbound are nobody's).
 */
export async function volumeReport(businessId: number, q: ReportQuery, tx: Tx = db) {
  const scope = await reportScope(businessId, q, tx);
  const tz = scope.timeZone;
  const g = q.group_by;
  const byStaff = q.staff_id !== undefined;
  const zeros = sql.join(
    MESSAGE_NAMES.map((n) => sql`0 as ${sql.raw(n)}`),
    sql`, `,
  );
  const cols = (staff: SQL) => ({ staff, location: sql`r.location_id`, channel: sql`r.channel` });
  const rows = await tx.execute<VolumeRow>(sql`
    with ${split(q, tz, { days: scope.rollups, weeks: false })}
    select key, sum(opened)::int as opened, sum(resolved)::int as resolved,
      ${messageCounts((channel, inbound) => sql`coalesce(sum(${sql.raw(`${channel}_${inbound ? 'in' : 'out'}`)}), 0)::int`)}
    from (
      select ${rollupKey(g, sql`h.day`)} as key,
        ${byStaff ? sql`0` : sql`sum(h.opened)`} as opened, sum(h.resolved) as resolved,
        ${messageCounts((channel, inbound) =>
          // Under staff_id only what they sent: nothing inbound.
          inbound && byStaff
            ? sql`0`
            : sql`sum(${inbound ? sql`h.messages_in` : sql`h.messages_out`}) filter (where h.channel = ${channel})`,
        )}
      from span, report_day_counts h
      where h.business_id = ${businessId} and h.local = ${scope.local}
        and ${periodsOf({ days: scope.rollups, weeks: false }, sql`h.day`)[0] ?? sql`false`} ${rollupFilters(q)}
      group by 1
      union all
      select ${rawKey(g, sql`r.started_at`, tz, cols(sql`null::int`))}, count(*), 0, ${zeros}
      from report_cycles r join raw_ranges x on r.started_at >= x.lo and r.started_at < x.hi
      where r.business_id = ${businessId} ${rowFilters(q, sql`null::int`)}
      group by 1
      union all
      select ${rawKey(g, sql`r.resolved_at`, tz, cols(sql`r.resolved_by_staff_id`))}, 0, count(*), ${zeros}
      from report_cycles r join raw_ranges x on r.resolved_at >= x.lo and r.resolved_at < x.hi
      where r.business_id = ${businessId} ${rowFilters(q, sql`r.resolved_by_staff_id`)}
      group by 1
      union all
      select ${rawKey(g, sql`r.sent_at`, tz, cols(sql`r.staff_id`))}, 0, 0,
        ${messageCounts((channel, inbound) => sql`count(*) filter (where r.channel = ${channel} and r.inbound = ${inbound})`)}
      from report_messages r join raw_ranges x on r.sent_at >= x.lo and r.sent_at < x.hi
      where r.business_id = ${businessId} ${rowFilters(q, sql`r.staff_id`)}
        ${byStaff ? sql`and not r.inbound` : sql``}
      group by 1
    ) x group by key`);
  const figures = (r: VolumeRow | undefined) => ({
    conversations_opened: r?.opened ?? 0,
    conversations_resolved: r?.resolved ?? 0,
    messages: Object.fromEntries(MESSAGE_NAMES.map((n) => [n, r?.[n] ?? 0])) as Record<(typeof MESSAGE_NAMES)[number], number>,
  });
  const counted = rows.filter((r) => r.opened || r.resolved || MESSAGE_NAMES.some((n) => r[n]));
  const total = counted.reduce(
    (sum, r) => {
      sum.opened += r.opened;
      sum.resolved += r.resolved;
      for (const n of MESSAGE_NAMES) sum[n] += r[n];
      return sum;
    },
    { key: null, opened: 0, resolved: 0, ...Object.fromEntries(MESSAGE_NAMES.map((n) => [n, 0])) } as VolumeRow,
  );
  const byKey = new Map(counted.map((r) => [r.key, r]));
  return envelope(
    'volume' as const,
    businessId,
    q,
    scope,
    figures(total),
    groupsOf(q, byKey.keys(), (k) => figures(byKey.get(k))),
  );
}

/** Stats as SQL aggregates (the calls report's small table: percentile_cont itself). */
const stats = (seconds: SQL, business: SQL) => sql`
  count(${seconds})::int as count,
  percentile_cont(0.5) within group (order by ${seconds}) as median_seconds,
  percentile_cont(0.9) within group (order by ${seconds}) as p90_seconds,
  percentile_cont(0.5) within group (order by ${business}) as median_business_seconds,
  percentile_cont(0.9) within group (order by ${business}) as p90_business_seconds`;

const EMPTY: Stats = {
  count: 0,
  median_seconds: null,
  p90_seconds: null,
  median_business_seconds: null,
  p90_business_seconds: null,
};

/**
 * Missed calls and voicemails (by when they came), how many were answered (called back or
 * replied to) and how long that took. `staff_id` and grouping by staff: who answered. `channel`
 * does not apply (calls are voice): a 422.
 */
export async function callsReport(businessId: number, q: ReportQuery, tx: Tx = db) {
  if (q.channel !== undefined) throw AppError.invalid(['query', 'channel'], 'does not apply to the calls report');
  if (q.group_by === 'channel') throw AppError.invalid(['query', 'group_by'], 'does not apply to the calls report');
  const scope = await reportScope(businessId, q, tx);
  const at = sql`r.called_at`;
  type Row = Stats & {
    key: string | null;
    total: boolean;
    calls: number;
    missed: number;
    voicemails: number;
    called_back: number;
    texted: number;
  };
  const rows = await tx.execute<Row>(sql`
    select r.grp as key, grouping(r.grp) = 1 as total, ${stats(sql`r.seconds`, sql`r.business_seconds`)},
      count(*)::int as calls, count(*) filter (where r.outcome = 'missed')::int as missed,
      count(*) filter (where r.outcome = 'voicemail')::int as voicemails,
      count(*) filter (where r.answered_by = 'call')::int as called_back,
      count(*) filter (where r.answered_by in ('sms', 'email'))::int as texted
    from (select ${rawKey(q.group_by, at, scope.timeZone, { staff: sql`r.answered_staff_id`, location: sql`r.location_id`, channel: sql`null` })} as grp, r.*
      from report_missed_calls r where r.business_id = ${businessId}
        and ${at} >= ${range(q).from} and ${at} < ${range(q).to} ${rowFilters(q, sql`r.answered_staff_id`)}) r
    group by grouping sets ((r.grp), ())`);
  const figures = (row: Row | undefined) => ({
    calls: row?.calls ?? 0,
    missed: row?.missed ?? 0,
    voicemails: row?.voicemails ?? 0,
    called_back: row?.called_back ?? 0,
    texted: row?.texted ?? 0,
    time_to_answer: row
      ? {
          count: row.count,
          median_seconds: row.median_seconds,
          p90_seconds: row.p90_seconds,
          median_business_seconds: row.median_business_seconds,
          p90_business_seconds: row.p90_business_seconds,
        }
      : EMPTY,
  });
  const groups = new Map(rows.filter((r) => !r.total).map((r) => [r.key, r]));
  return envelope(
    'calls' as const,
    businessId,
    q,
    scope,
    figures(rows.find((r) => r.total)),
    groupsOf(q, groups.keys(), (k) => figures(groups.get(k))),
  );
}

/**
 * Deliverability: our texts and emails (by when they were written) that ended failed, undelivered
 * or bounced, per reason (`error_code`), and opt-outs recorded (by channel). `staff_id`: the
 * failures of what they sent (opt-outs are the clients': none). Group by staff, location or day.
 */
export async function deliverabilityReport(businessId: number, q: ReportQuery, tx: Tx = db) {
  const scope = await reportScope(businessId, q, tx);
  const tz = scope.timeZone;
  const { from, to } = range(q);
  const within = (at: SQL) => sql`${at} >= ${from} and ${at} < ${to}`;
  const key = rawKey(q.group_by, sql`m.sent_at`, tz, {
    staff: sql`m.staff_id`,
    location: sql`c.location_id`,
    channel: sql`m.channel`,
  });
  const failures = await tx.execute<{ key: string | null; total: boolean; reason: string | null; count: number }>(sql`
    select f.grp as key, grouping(f.grp) = 1 as total, f.reason, count(*)::int as count
    from (select ${key} as grp, m.error_code as reason
    from messages m join conversations c on c.business_id = m.business_id and c.id = m.conversation_id
    where m.business_id = ${businessId} and m.direction = 'outbound' and m.message_type in ('TEXT', 'EMAIL')
      and m.status in ('failed', 'undelivered', 'bounced') and ${within(sql`m.sent_at`)}
      ${q.location_id !== undefined ? sql`and c.location_id = ${q.location_id}` : sql``}
      ${q.channel !== undefined ? sql`and m.channel = ${q.channel}` : sql``}
      ${q.staff_id !== undefined ? sql`and m.staff_id = ${q.staff_id}` : sql``}) f
    group by grouping sets ((f.grp, f.reason), (f.reason))
    order by f.reason nulls last`);
  const optKey =
    q.group_by === 'day' || q.group_by === 'week' || q.group_by === 'channel'
      ? rawKey(q.group_by, sql`o.created_at`, tz, { staff: sql`null`, location: sql`null`, channel: sql`o.channel` })
      : sql`null::text`;
  const optOuts =
    q.staff_id !== undefined || q.location_id !== undefined
      ? []
      : await tx.execute<{ key: string | null; total: boolean; channel: string; count: number }>(sql`
          select o.grp as key, grouping(o.grp) = 1 as total, o.channel, count(*)::int as count
          from (select ${optKey} as grp, o.channel from opt_out_events o
            where o.business_id = ${businessId} and o.action = 'opt_out' and ${within(sql`o.created_at`)}
            ${q.channel !== undefined ? sql`and o.channel = ${q.channel}` : sql``}) o
          group by grouping sets ((o.grp, o.channel), (o.channel))`);
  const figures = (k: string | null | 'total') => {
    const mine = <T extends { key: string | null; total: boolean }>(rows: readonly T[]) =>
      rows.filter((r) => (k === 'total' ? r.total : !r.total && r.key === k));
    return {
      failures: mine(failures).map((r) => ({ reason: r.reason, count: r.count })),
      opt_outs: mine(optOuts).map((r) => ({ channel: r.channel, count: r.count })),
    };
  };
  const keys = [...failures, ...optOuts].filter((r) => !r.total).map((r) => r.key);
  return envelope(
    'deliverability' as const,
    businessId,
    q,
    scope,
    figures('total'),
    groupsOf(q, keys, (k) => figures(k)),
  );
}
