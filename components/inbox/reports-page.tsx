'use client';
import { useId, useState, type ReactNode } from 'react';
import { trpc } from '@/components/trpc/client';
import { MESSAGE_COUNTS, type GroupBy, type ReportName, type Stats } from '@/server/shared/reports';
import { describeError } from './format';
import { ReportChart } from './report-chart';
import { lastDays, rangeQuery, type DayRange } from './report-range';
import { SettingsError, SettingsPage } from './settings-page';
import type { inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '@/server/trpc/root';
import styles from './reports.module.css';

type Preset = '7' | '30' | '90' | 'custom';
type Outputs = inferRouterOutputs<AppRouter>['inbox'];
type Filters = Outputs['reportFilters'];
/** A report's answer, one shape per report (server/schemas/reports.ts). */
type Answer = Outputs['report'];
type AnswerOf<R extends ReportName> = Extract<Answer, { report: R }>;
type MessageCount = (typeof MESSAGE_COUNTS)[number];

/** The volume report's message counts, as the table heads them (every one: the record says so). */
const MESSAGE_LABELS: Record<MessageCount, string> = {
  sms_in: 'SMS in',
  sms_out: 'SMS out',
  email_in: 'Emails in',
  email_out: 'Emails out',
  voice_in: 'Calls in',
  voice_out: 'Calls out',
};

/** A duration as staff read it: 42 s, 5 min 3 s, 2 h 5 min; a dash for none. */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s / 60} min`;
  const m = Math.round(s / 60);
  return m % 60 ? `${Math.floor(m / 60)} h ${m % 60} min` : `${m / 60} h`;
}

type TableRow = { label: string; total: boolean; cells: { value: number | null; text?: string }[] };

/**
 * A report's table: a row per group and the total, a column per figure. Each cell carries the exact
 * figure in `data-value` and its column's name in `data-label`, which a phone shows beside the value
 * when the rows become cards (the explicit roles keep it a table to screen readers whatever the CSS).
 */
function FigureTable({ caption, columns, rows }: { caption: string; columns: string[]; rows: TableRow[] }) {
  return (
    <table className={styles.table} role="table">
      <caption>{caption}</caption>
      <thead role="rowgroup">
        <tr role="row">
          {columns.map((c) => (
            <th scope="col" role="columnheader" key={c}>
              {c}
            </th>
          ))}
        </tr>
      </thead>
      <tbody role="rowgroup">
        {rows.map((r) => (
          <tr role="row" key={r.label} className={r.total ? styles.total : undefined}>
            <th scope="row" role="rowheader">
              {r.label}
            </th>
            {r.cells.map((c, i) => (
              <td role="cell" key={i} data-label={columns[i + 1]} data-value={c.value ?? ''}>
                {c.text ?? (c.value === null ? '—' : String(c.value))}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * The Reports page (docs/api.md#reports; issue 39): a range (the last 7, 30 or 90 days, or chosen
 * dates, as days on the clock the report reads: the chosen location's, else the business's),
 * filters, a grouping, and per report a chart with the table of
 * the same figures under it, and the CSV of every cycle. A staff member without the owner or
 * manager role sees only their own figures (the server enforces it) and is told so.
 */
export function ReportsPage() {
  const me = trpc.session.me.useQuery();
  const filters = trpc.inbox.reportFilters.useQuery(undefined, { retry: false });
  if (me.error || filters.error) {
    return (
      <SettingsPage title="Reports">
        <SettingsError error={describeError(me.error ?? filters.error)} />
      </SettingsPage>
    );
  }
  if (!me.data || !filters.data) {
    return (
      <SettingsPage title="Reports">
        <p>Loading…</p>
      </SettingsPage>
    );
  }
  return <Reports businessId={me.data.businessId} staffName={me.data.staffName} filters={filters.data} />;
}

type Key = string | number | null;

/** A report's rows as its tables and chart read them: a row per group, then the total. */
function rowsOf<F>(
  data: { total: F; groups: readonly NoInfer<F & { key: Key }>[] },
  label: (key: Key) => string,
): { label: string; row: F; total: boolean }[] {
  return [
    ...data.groups.map((g) => ({ label: label(g.key), row: g, total: false })),
    { label: 'Total', row: data.total, total: true },
  ];
}

function Reports({ businessId, staffName, filters }: { businessId: number; staffName: string; filters: Filters }) {
  const ids = useId();
  const [preset, setPreset] = useState<Preset>('30');
  const [custom, setCustom] = useState<DayRange>(() => lastDays(filters.timeZone, 30));
  const [locationId, setLocationId] = useState('');
  const [staffId, setStaffId] = useState('');
  const [channel, setChannel] = useState('');
  const [groupBy, setGroupBy] = useState<GroupBy>('day');
  const [business, setBusiness] = useState(false);

  // The range, as days on the clock the report reads its days on: the location's when one is
  // chosen, else the business's (reportFilters gives each, by the reports' own rule).
  const location = filters.locations.find((l) => String(l.id) === locationId);
  const timeZone = location?.timeZone ?? filters.timeZone;
  const range = preset === 'custom' ? custom : lastDays(timeZone, Number(preset));
  const asked = rangeQuery(range, timeZone);
  const rangeError = 'error' in asked ? asked.error : null;

  const query: Record<string, string> = 'error' in asked ? {} : { ...asked };
  if (locationId) query.location_id = locationId;
  if (staffId && filters.seesEveryone) query.staff_id = staffId;
  if (channel) query.channel = channel;
  const csv = `/api/v1/businesses/${businessId}/reports/export?${new URLSearchParams(query)}`;
  const grouped = { ...query, group_by: groupBy };
  const enabled = !rangeError;
  // Calls are voice: no channel filter, and by day rather than by channel.
  const callsQuery: Record<string, string> = { ...grouped, group_by: groupBy === 'channel' ? 'day' : groupBy };
  delete callsQuery.channel;

  const responseTimes = trpc.inbox.report.useQuery({ report: 'response-times', query: grouped }, { enabled, retry: false });
  const volume = trpc.inbox.report.useQuery({ report: 'volume', query: grouped }, { enabled, retry: false });
  const calls = trpc.inbox.report.useQuery({ report: 'calls', query: callsQuery }, { enabled, retry: false });
  const deliverability = trpc.inbox.report.useQuery({ report: 'deliverability', query: grouped }, { enabled, retry: false });

  const groupLabel = (key: Key): string => {
    if (key === null) return groupBy === 'staff' ? 'Nobody' : 'None';
    if (groupBy === 'staff')
      return filters.staff.find((s) => s.id === key)?.name ?? (filters.seesEveryone ? `Staff ${key}` : staffName);
    if (groupBy === 'location') return filters.locations.find((l) => l.id === key)?.name ?? `Location ${key}`;
    if (groupBy === 'channel') return key === 'sms' ? 'SMS' : key === 'email' ? 'Email' : String(key);
    return String(key);
  };
  const median = (s: Stats) => (business ? s.median_business_seconds : s.median_seconds);
  const p90 = (s: Stats) => (business ? s.p90_business_seconds : s.p90_seconds);
  // The zone the reports answered with (they read days in it), else the one the range was asked in.
  const daysIn = responseTimes.data?.time_zone ?? timeZone;
  const groupHeader = { day: 'Day', week: 'Week of', staff: 'Staff', location: 'Location', channel: 'Channel' }[groupBy];

  return (
    <SettingsPage title="Reports">
      <section className={styles.wide} aria-label="Range and filters">
        {filters.seesEveryone ? null : (
          <p className={styles.note} data-testid="own-figures">
            These are your own figures: replies you sent, conversations you resolved, calls you answered. The owner or manager
            role sees everyone’s.
          </p>
        )}
        <form className={styles.controls} onSubmit={(e) => e.preventDefault()}>
          <fieldset className={styles.presets}>
            <legend>Range</legend>
            {(['7', '30', '90'] as const).map((p) => (
              <label key={p}>
                <input type="radio" name={`${ids}-range`} checked={preset === p} onChange={() => setPreset(p)} />
                Last {p} days
              </label>
            ))}
            <label>
              <input
                type="radio"
                name={`${ids}-range`}
                checked={preset === 'custom'}
                onChange={() => {
                  setCustom(range);
                  setPreset('custom');
                }}
              />
              Dates
            </label>
          </fieldset>
          {preset === 'custom' ? (
            <div className={styles.dates}>
              <label>
                From
                <input
                  type="date"
                  className={styles.field}
                  value={custom.from}
                  onChange={(e) => setCustom({ ...custom, from: e.target.value })}
                />
              </label>
              <label>
                To
                <input
                  type="date"
                  className={styles.field}
                  value={custom.to}
                  onChange={(e) => setCustom({ ...custom, to: e.target.value })}
                />
              </label>
            </div>
          ) : null}
          <label>
            Location
            <select className={styles.field} value={locationId} onChange={(e) => setLocationId(e.target.value)}>
              <option value="">All locations</option>
              {filters.locations.map((l) => (
                <option key={l.id} value={l.id}>
                  {l.name}
                </option>
              ))}
            </select>
          </label>
          {filters.seesEveryone ? (
            <label>
              Staff
              <select className={styles.field} value={staffId} onChange={(e) => setStaffId(e.target.value)}>
                <option value="">Everyone</option>
                {filters.staff.map((s) => (
                  <option key={s.id} value={s.id}>
                    {s.name}
                    {s.active ? '' : ' (inactive)'}
                  </option>
                ))}
              </select>
            </label>
          ) : null}
          <label>
            Channel
            <select className={styles.field} value={channel} onChange={(e) => setChannel(e.target.value)}>
              <option value="">SMS and email</option>
              <option value="sms">SMS</option>
              <option value="email">Email</option>
            </select>
          </label>
          <label>
            Group by
            <select className={styles.field} value={groupBy} onChange={(e) => setGroupBy(e.target.value as GroupBy)}>
              <option value="day">Day</option>
              <option value="week">Week</option>
              <option value="staff">Staff</option>
              <option value="location">Location</option>
              <option value="channel">Channel</option>
            </select>
          </label>
          <label>
            Times
            <select
              className={styles.field}
              value={business ? 'business' : 'clock'}
              onChange={(e) => setBusiness(e.target.value === 'business')}
            >
              <option value="clock">Clock time</option>
              <option value="business">Business hours only</option>
            </select>
          </label>
        </form>
        <SettingsError error={rangeError} />
        <p className={styles.note}>
          Days are read on {location ? `${location.name}’s` : 'the business’s'} clock ({daysIn}).{' '}
          {rangeError ? null : (
            <a href={csv} download className={styles.download}>
              Download CSV
            </a>
          )}
        </p>
      </section>

      <ReportSection title="Response times" report="response-times" query={responseTimes}>
        {(data) => {
          const rows = rowsOf(data, groupLabel);
          const times = (f: 'first_response' | 'reply' | 'resolution') => (r: (typeof rows)[number]) => {
            const st = r.row[f];
            return [
              { value: st.count },
              { value: median(st), text: duration(median(st)) },
              { value: p90(st), text: duration(p90(st)) },
            ];
          };
          const unit = business ? 'business hours' : 'clock time';
          return (
            <>
              <ReportChart
                caption={`Median first response (${unit}) by ${groupHeader.toLowerCase()}`}
                bars={rows
                  .filter((r) => !r.total)
                  .map((r) => {
                    const m = median(r.row.first_response);
                    return { label: r.label, value: m === null ? null : m / 60, text: duration(m) };
                  })}
                unit="minutes"
              />
              {(
                [
                  ['first_response', 'First responses'],
                  ['reply', 'Replies'],
                  ['resolution', 'Resolutions'],
                ] as const
              ).map(([f, name]) => (
                <FigureTable
                  key={f}
                  caption={`${name} (${unit})`}
                  columns={[groupHeader, name, 'Median', '90th percentile']}
                  rows={rows.map((r) => ({ label: r.label, total: r.total, cells: times(f)(r) }))}
                />
              ))}
            </>
          );
        }}
      </ReportSection>

      <ReportSection title="Volume" report="volume" query={volume}>
        {(data) => {
          const rows = rowsOf(data, groupLabel);
          const msgs = MESSAGE_COUNTS.map((m) => [m, MESSAGE_LABELS[m]] as const);
          return (
            <>
              <ReportChart
                caption={`Conversations opened by ${groupHeader.toLowerCase()}`}
                bars={rows
                  .filter((r) => !r.total)
                  .map((r) => ({
                    label: r.label,
                    value: r.row.conversations_opened,
                    text: String(r.row.conversations_opened),
                  }))}
                unit="conversations"
              />
              <FigureTable
                caption="Conversations"
                columns={[groupHeader, 'Opened', 'Resolved']}
                rows={rows.map((r) => ({
                  label: r.label,
                  total: r.total,
                  cells: [{ value: r.row.conversations_opened }, { value: r.row.conversations_resolved }],
                }))}
              />
              <FigureTable
                caption="Messages"
                columns={[groupHeader, ...msgs.map(([, l]) => l)]}
                rows={rows.map((r) => ({
                  label: r.label,
                  total: r.total,
                  cells: msgs.map(([m]) => ({ value: r.row.messages[m] })),
                }))}
              />
            </>
          );
        }}
      </ReportSection>

      <ReportSection
        title="Missed calls"
        report="calls"
        query={calls}
        note={
          channel || groupBy === 'channel'
            ? 'Calls are voice: the channel filter and grouping do not apply (by day here).'
            : undefined
        }
      >
        {(data) => {
          const rows = rowsOf(data, groupLabel);
          return (
            <>
              <ReportChart
                caption="Missed calls and voicemails"
                bars={rows
                  .filter((r) => !r.total)
                  .map((r) => ({ label: r.label, value: r.row.calls, text: String(r.row.calls) }))}
                unit="calls"
              />
              <FigureTable
                caption="Missed calls and how they were answered"
                columns={[groupBy === 'channel' ? 'Day' : groupHeader, 'Calls', 'Missed', 'Voicemails', 'Called back', 'Texted']}
                rows={rows.map((r) => ({
                  label: r.label,
                  total: r.total,
                  cells: (['calls', 'missed', 'voicemails', 'called_back', 'texted'] as const).map((f) => ({
                    value: r.row[f],
                  })),
                }))}
              />
              <FigureTable
                caption="Time to answer a missed call"
                columns={[groupBy === 'channel' ? 'Day' : groupHeader, 'Answered', 'Median', '90th percentile']}
                rows={rows.map((r) => {
                  const st = r.row.time_to_answer;
                  return {
                    label: r.label,
                    total: r.total,
                    cells: [
                      { value: st.count },
                      { value: median(st), text: duration(median(st)) },
                      { value: p90(st), text: duration(p90(st)) },
                    ],
                  };
                })}
              />
            </>
          );
        }}
      </ReportSection>

      <ReportSection title="Deliverability" report="deliverability" query={deliverability}>
        {(data) => {
          const rows = rowsOf(data, groupLabel);
          const sum = (xs: readonly { count: number }[]) => xs.reduce((n, x) => n + x.count, 0);
          return (
            <>
              <ReportChart
                caption={`Delivery failures by ${groupHeader.toLowerCase()}`}
                bars={rows
                  .filter((r) => !r.total)
                  .map((r) => {
                    const n = sum(r.row.failures);
                    return { label: r.label, value: n, text: String(n) };
                  })}
                unit="failures"
              />
              <FigureTable
                caption="Texts and emails that failed, per reason (error code), and opt-outs"
                columns={[groupHeader, 'Failures', 'Reasons', 'Opt-outs']}
                rows={rows.map((r) => {
                  const { failures, opt_outs: optOuts } = r.row;
                  return {
                    label: r.label,
                    total: r.total,
                    cells: [
                      { value: sum(failures) },
                      { value: null, text: failures.map((f) => `${f.reason ?? 'no code'} × ${f.count}`).join(', ') || '—' },
                      {
                        value: sum(optOuts),
                        text: optOuts.map((o) => `${o.channel === 'sms' ? 'SMS' : 'Email'} ${o.count}`).join(', ') || '0',
                      },
                    ],
                  };
                })}
              />
            </>
          );
        }}
      </ReportSection>
    </SettingsPage>
  );
}

/** One report: its heading, then what its query answered (loading, an error, or the chart and table). */
function ReportSection<R extends ReportName>({
  title,
  report,
  query,
  note,
  children,
}: {
  title: string;
  report: R;
  query: { data?: Answer; error: { message: string; data?: unknown } | null; isFetching: boolean };
  note?: string;
  children: (data: AnswerOf<R>) => ReactNode;
}) {
  const id = useId();
  const data = query.data?.report === report ? (query.data as AnswerOf<R>) : undefined;
  return (
    <section className={styles.wide} aria-labelledby={id} aria-busy={query.isFetching} data-report={title}>
      <h2 id={id}>{title}</h2>
      {note ? <p className={styles.note}>{note}</p> : null}
      <SettingsError
        error={describeError(query.error, {
          from: 'From',
          to: 'To',
          location_id: 'Location',
          staff_id: 'Staff',
          channel: 'Channel',
          group_by: 'Group by',
        })}
      />
      {data ? children(data) : query.error ? null : <p>Loading…</p>}
    </section>
  );
}
