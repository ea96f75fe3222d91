'use client';
import { useState } from 'react';
import { trpc } from '@/components/trpc/client';
import type { OpeningHoursBody } from '@/server/schemas/opening-hours';
import { MAX_EXCEPTIONS, MAX_INTERVALS_PER_DAY, WEEKDAYS, type Weekday } from '@/server/shared/opening-hours';
import { formatInZone } from '@/server/shared/zoned-time';
import { hoursErrors, invalidKeys } from './opening-hours-errors';
import { SettingsPage } from './settings-page';
import settings from './settings.module.css';
import styles from './opening-hours.module.css';

/**
 * Opening hours settings (docs/api.md#opening-hours): when the business, or each of its locations,
 * answers its clients — a weekly schedule (several intervals a day, overnight ones running into the
 * next day) and dated exceptions (holidays closed all day, special hours). Not quiet hours, which
 * hold automated texts outside the client's sending window: that is its own page.
 */

type Interval = { start: string; end: string };
type View = {
  location_id: number | null;
  source: 'location' | 'business' | 'default';
  time_zone: string;
  weekly: Record<Weekday, Interval[]>;
  exceptions: { date: string; name: string | null; intervals: Interval[] }[];
  status: { open: boolean; next_opening: string | null; next_closing: string | null };
};
type DatedDraft = { key: number; date: string; name: string; closed: boolean; intervals: Interval[] };
type Draft = { weekly: Record<Weekday, Interval[]>; exceptions: DatedDraft[] };

const dayName = (day: Weekday) => day.charAt(0).toUpperCase() + day.slice(1);
/** A time input cannot show 24:00: midnight reads as 00:00 here and is sent as 24:00. */
const shown = (i: Interval): Interval => ({ start: i.start, end: i.end === '24:00' ? '00:00' : i.end });
const sent = (i: Interval): Interval => ({ start: i.start, end: i.end === '00:00' ? '24:00' : i.end });
const overnight = (i: Interval) => i.end !== '00:00' && i.end < i.start;
const NEW_INTERVAL: Interval = { start: '09:00', end: '17:00' };
/** What a business that has set no hours starts from on this page (it is open around the clock until it saves). */
const STARTING_POINT = Object.fromEntries(
  WEEKDAYS.map((d) => [d, d === 'saturday' || d === 'sunday' ? [] : [NEW_INTERVAL]]),
) as Record<Weekday, Interval[]>;

/** What the editor starts from: a stored schedule (`source` names whose; `default`: none set). */
type Hours = Pick<View, 'weekly' | 'exceptions'> & { source: string };

let keys = 0;
function draftOf(view: Hours): Draft {
  if (view.source === 'default') return { weekly: STARTING_POINT, exceptions: [] };
  return {
    weekly: Object.fromEntries(WEEKDAYS.map((d) => [d, view.weekly[d].map(shown)])) as Record<Weekday, Interval[]>,
    exceptions: view.exceptions.map((e) => ({
      key: keys++,
      date: e.date,
      name: e.name ?? '',
      closed: e.intervals.length === 0,
      intervals: e.intervals.map(shown),
    })),
  };
}

function bodyOf(draft: Draft): OpeningHoursBody {
  return {
    weekly: Object.fromEntries(WEEKDAYS.map((d) => [d, draft.weekly[d].map(sent)])) as OpeningHoursBody['weekly'],
    exceptions: draft.exceptions.map((e) => ({
      date: e.date,
      name: e.name.trim() || null,
      intervals: e.closed ? [] : e.intervals.map(sent),
    })),
  };
}

function statusLine(view: View): string {
  const when = (at: string) => formatInZone(view.time_zone, at);
  if (view.status.open)
    return view.status.next_closing ? `Open now · closes ${when(view.status.next_closing)}` : 'Open now, around the clock';
  return view.status.next_opening ? `Closed now · opens ${when(view.status.next_opening)}` : 'Closed, with no opening ahead';
}

export function OpeningHoursSettings() {
  const utils = trpc.useUtils();
  const query = trpc.inbox.openingHours.useQuery();
  const [owner, setOwner] = useState<number | null>(null);
  const refresh = { onSuccess: () => void utils.inbox.openingHours.invalidate() };
  const save = trpc.inbox.setOpeningHours.useMutation(refresh);
  const clear = trpc.inbox.clearLocationOpeningHours.useMutation(refresh);
  const data = query.data;
  const location = owner === null ? undefined : data?.locations.find((l) => l.location_id === owner);
  const view = (location ?? data?.business) as View | undefined;
  const label = location ? location.name : 'Business';

  return (
    <SettingsPage title="Opening hours">
      <section aria-label="Whose opening hours" className={styles.wide}>
        <p className={settings.body}>
          When you answer your clients: each day&apos;s open intervals (an interval that closes at or before it opens runs past
          midnight into the next day), and dates with other hours or closed all day. Times are the location&apos;s own, in its
          time zone. This is not the same as quiet hours, the window automated texts keep to.
        </p>
        {query.isPending ? <p role="status">Loading…</p> : null}
        {data && data.locations.length > 0 ? (
          <label className={styles.owner}>
            Hours for{' '}
            <select
              className={settings.field}
              value={owner ?? ''}
              onChange={(e) => {
                setOwner(e.target.value ? Number(e.target.value) : null);
                save.reset();
              }}
            >
              <option value="">The business (every location without its own)</option>
              {data.locations.map((l) => (
                <option key={l.location_id} value={l.location_id!}>
                  {l.name}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        {view ? (
          <p className={styles.status} data-testid="opening-status">
            <strong>{statusLine(view)}</strong> <span>({view.time_zone})</span>
          </p>
        ) : null}
        {view?.source === 'default' ? (
          <p className={settings.body}>
            No hours set yet: open around the clock. Below is a starting point; Save to set the business&apos;s hours.
          </p>
        ) : null}
        {location && view?.source !== 'location' ? (
          <p className={settings.body}>
            {location.name} keeps to the business&apos;s hours, shown below. Saving gives it its own.
          </p>
        ) : null}
        {location && view?.source === 'location' ? (
          <button
            type="button"
            className={settings.button}
            disabled={clear.isPending}
            onClick={() => clear.mutate({ locationId: location.location_id! })}
          >
            Use the business&apos;s hours
          </button>
        ) : null}
      </section>
      {view ? (
        <HoursForm
          // A new draft when the stored hours or the owner change (after a save, for instance).
          key={`${owner}-${view.source}-${JSON.stringify([view.weekly, view.exceptions])}`}
          label={label}
          view={view}
          saving={save.isPending}
          saved={save.isSuccess}
          error={save.error ?? clear.error}
          onSave={(body) => save.mutate({ locationId: owner, hours: body })}
        />
      ) : null}
    </SettingsPage>
  );
}

/** The schedule editor, also a staff member's on the Staff schedules page (staff-schedules-settings.tsx). */
export function HoursForm(props: {
  label: string;
  view: Hours;
  saving: boolean;
  saved: boolean;
  error: { message: string; data?: unknown } | null;
  onSave: (body: OpeningHoursBody) => void;
}) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(props.view));
  const [sentDates, setSentDates] = useState<string[]>([]);
  const errors = hoursErrors(props.error, sentDates);
  const invalid = invalidKeys(props.error);
  const setDay = (day: Weekday, intervals: Interval[]) => setDraft({ ...draft, weekly: { ...draft.weekly, [day]: intervals } });
  const setDated = (key: number, change: Partial<DatedDraft>) =>
    setDraft({ ...draft, exceptions: draft.exceptions.map((e) => (e.key === key ? { ...e, ...change } : e)) });

  return (
    <form
      className={`${styles.form} ${styles.wide}`}
      aria-label={`${props.label} opening hours`}
      onSubmit={(e) => {
        e.preventDefault();
        setSentDates(draft.exceptions.map((x) => x.date));
        props.onSave(bodyOf(draft));
      }}
    >
      <fieldset className={styles.block}>
        <legend>Every week</legend>
        {WEEKDAYS.map((day) => (
          <div key={day} className={styles.day}>
            <span className={styles.dayName}>{dayName(day)}</span>
            <Intervals
              name={dayName(day)}
              intervals={draft.weekly[day]}
              invalid={(i) => invalid.has(`weekly.${day}.${i}`)}
              onChange={(list) => setDay(day, list)}
            />
          </div>
        ))}
      </fieldset>
      <fieldset className={styles.block}>
        <legend>Holidays and special dates</legend>
        {draft.exceptions.length === 0 ? <p className={settings.body}>None: every date keeps its weekday&apos;s hours.</p> : null}
        {draft.exceptions.map((e, n) => (
          <div
            key={e.key}
            role="group"
            aria-label={`Date ${n + 1}`}
            className={styles.dated}
            data-invalid={invalid.has(`exceptions.${n}`) || undefined}
          >
            <div className={styles.datedRow}>
              <Field label="Date" type="date" value={e.date} onChange={(date) => setDated(e.key, { date })} />
              <label>
                Name{' '}
                <input
                  className={settings.field}
                  value={e.name}
                  maxLength={100}
                  placeholder="Christmas Day"
                  onChange={(ev) => setDated(e.key, { name: ev.target.value })}
                />
              </label>
              <button
                type="button"
                className={settings.button}
                aria-label={`Remove date ${n + 1}`}
                onClick={() => setDraft({ ...draft, exceptions: draft.exceptions.filter((x) => x.key !== e.key) })}
              >
                Remove
              </button>
            </div>
            <label className={styles.check}>
              <input
                type="checkbox"
                checked={e.closed}
                onChange={(ev) =>
                  setDated(e.key, {
                    closed: ev.target.checked,
                    intervals: !ev.target.checked && e.intervals.length === 0 ? [NEW_INTERVAL] : e.intervals,
                  })
                }
              />{' '}
              Closed all day
            </label>
            {e.closed ? null : (
              <Intervals
                name={`Date ${n + 1}`}
                intervals={e.intervals}
                invalid={() => false}
                onChange={(list) => setDated(e.key, { intervals: list })}
              />
            )}
          </div>
        ))}
        <button
          type="button"
          className={styles.addDate}
          disabled={draft.exceptions.length >= MAX_EXCEPTIONS}
          onClick={() =>
            setDraft({
              ...draft,
              exceptions: [...draft.exceptions, { key: keys++, date: '', name: '', closed: true, intervals: [] }],
            })
          }
        >
          Add a date
        </button>
      </fieldset>
      <div className={styles.actions}>
        <button type="submit" className={`${settings.button} ${settings.primary}`} disabled={props.saving}>
          Save {props.label === 'Business' ? "the business's" : `${props.label}'s`} hours
        </button>
        {props.saved && errors.length === 0 ? <span role="status">Saved.</span> : null}
      </div>
      {errors.length > 0 ? (
        <ul role="alert" className={styles.errors}>
          {errors.map((e) => (
            <li key={e}>{e}</li>
          ))}
        </ul>
      ) : null}
    </form>
  );
}

/** One day's intervals (or one date's): From and Until each, "next day" when it runs past midnight. */
function Intervals({
  name,
  intervals,
  invalid,
  onChange,
}: {
  name: string;
  intervals: Interval[];
  invalid: (index: number) => boolean;
  onChange: (intervals: Interval[]) => void;
}) {
  const set = (i: number, change: Partial<Interval>) => onChange(intervals.map((x, j) => (j === i ? { ...x, ...change } : x)));
  return (
    <div className={styles.intervals}>
      {intervals.length === 0 ? <span className={styles.closed}>Closed</span> : null}
      {intervals.map((interval, i) => (
        <div
          key={i}
          role="group"
          aria-label={`${name}, interval ${i + 1}`}
          className={styles.interval}
          data-invalid={invalid(i) || undefined}
        >
          <Field label="From" type="time" value={interval.start} onChange={(start) => set(i, { start })} />
          <Field label="Until" type="time" value={interval.end} onChange={(end) => set(i, { end })} />
          {overnight(interval) ? <span className={styles.nextDay}>next day</span> : null}
          <button
            type="button"
            className={styles.remove}
            aria-label={`Remove ${name}, interval ${i + 1}`}
            onClick={() => onChange(intervals.filter((_, j) => j !== i))}
          >
            ×
          </button>
        </div>
      ))}
      {intervals.length < MAX_INTERVALS_PER_DAY ? (
        <button
          type="button"
          className={styles.add}
          aria-label={`Add an interval on ${name}`}
          onClick={() => onChange([...intervals, intervals.length ? { start: '18:00', end: '22:00' } : NEW_INTERVAL])}
        >
          + Add
        </button>
      ) : null}
    </div>
  );
}

/** A required date or time input with its label. */
function Field(props: { label: string; type: 'date' | 'time'; value: string; onChange: (value: string) => void }) {
  return (
    <label>
      {props.label}{' '}
      <input
        type={props.type}
        className={settings.field}
        value={props.value}
        required
        onChange={(e) => props.onChange(e.target.value)}
      />
    </label>
  );
}
