'use client';
import { useState } from 'react';
import { trpc } from '@/components/trpc/client';
import { MAX_CAPACITY, STAFF_MANAGER_ROLES } from '@/server/shared/staff-availability';
import { formatInZone } from '@/server/shared/zoned-time';
import { HoursForm } from './opening-hours-settings';
import { SettingsPage } from './settings-page';
import settings from './settings.module.css';
import hoursStyles from './opening-hours.module.css';
import styles from './availability.module.css';

/**
 * Staff schedules (docs/api.md#staff-availability): when each staff member is on shift — their
 * location's opening hours, or a schedule of their own edited like opening hours (the same editor
 * and refusals) — and, for owners and managers, how many waiting conversations auto-assignment
 * gives them. Everyone edits their own schedule; a colleague's takes an owner or manager.
 */

type Schedule = {
  staff_id: number;
  name: string;
  source: 'own' | 'location' | 'business' | 'default';
  time_zone: string;
  status: { on_shift: boolean; next_shift_start: string | null; next_shift_end: string | null };
};

const FOLLOWS: Record<Exclude<Schedule['source'], 'own'>, string> = {
  location: 'their location’s opening hours',
  business: 'the business’s opening hours',
  default: 'the opening hours (none set: around the clock)',
};

function shiftLine(s: Schedule): string {
  const when = (at: string) => formatInZone(s.time_zone, at);
  if (s.status.on_shift)
    return s.status.next_shift_end ? `On shift now · until ${when(s.status.next_shift_end)}` : 'On shift, around the clock';
  return s.status.next_shift_start
    ? `Off shift now · next shift ${when(s.status.next_shift_start)}`
    : 'Off shift, no shift ahead';
}

export function StaffSchedulesSettings() {
  const utils = trpc.useUtils();
  const me = trpc.session.me.useQuery();
  const schedules = trpc.inbox.staffSchedules.useQuery();
  const [chosen, setChosen] = useState<number | null>(null);
  const [ownSchedule, setOwnSchedule] = useState<boolean | null>(null);
  const refresh = {
    onSuccess: () => {
      void utils.inbox.staffSchedules.invalidate();
      void utils.inbox.availability.invalidate();
    },
  };
  const save = trpc.inbox.setStaffSchedule.useMutation(refresh);
  const staffId = chosen ?? me.data?.staffId ?? null;
  const view = schedules.data?.find((s) => s.staff_id === staffId);
  const manager = (STAFF_MANAGER_ROLES as readonly string[]).includes(me.data?.role ?? '');
  const mayEdit = manager || staffId === me.data?.staffId;
  const own = ownSchedule ?? view?.source === 'own';

  return (
    <SettingsPage title="Staff schedules">
      <section aria-label="Whose schedule" className={hoursStyles.wide}>
        <p className={settings.body}>
          Who is on shift when. A staff member works their location&apos;s opening hours unless they have a schedule of their own.
          Available means on shift and not Away (the switch in the inbox&apos;s top bar): only available staff are given new
          conversations.
        </p>
        {schedules.isPending ? <p role="status">Loading…</p> : null}
        {schedules.data ? (
          <label className={hoursStyles.owner}>
            Schedule of{' '}
            <select
              className={settings.field}
              value={staffId ?? ''}
              onChange={(e) => {
                setChosen(Number(e.target.value));
                setOwnSchedule(null);
                save.reset();
              }}
            >
              {schedules.data.map((s) => (
                <option key={s.staff_id} value={s.staff_id}>
                  {s.staff_id === me.data?.staffId ? `${s.name} (me)` : s.name}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        {view ? (
          <>
            <p className={hoursStyles.status} data-testid="shift-status">
              <strong>{shiftLine(view)}</strong> <span>({view.time_zone})</span>
            </p>
            <fieldset className={styles.choice} disabled={!mayEdit || save.isPending}>
              <legend>Working hours</legend>
              <label>
                <input
                  type="radio"
                  name="schedule-kind"
                  checked={!own}
                  onChange={() => {
                    setOwnSchedule(false);
                    if (view.source === 'own') save.mutate({ staffId: view.staff_id, hours: null });
                  }}
                />{' '}
                Follow {view.source === 'own' ? 'their location’s opening hours' : FOLLOWS[view.source]}
              </label>
              <label>
                <input type="radio" name="schedule-kind" checked={own} onChange={() => setOwnSchedule(true)} /> Their own schedule
              </label>
            </fieldset>
            {!mayEdit ? <p className={settings.body}>Only an owner or a manager changes a colleague&apos;s schedule.</p> : null}
            {manager ? <CapacityForm key={view.staff_id} staffId={view.staff_id} /> : null}
          </>
        ) : null}
      </section>
      {view && own && mayEdit ? (
        <HoursForm
          key={`${view.staff_id}-${view.source}-${JSON.stringify([view.weekly, view.exceptions])}`}
          label={view.name}
          // Their own schedule, else the hours they follow now, as a starting point.
          view={view}
          saving={save.isPending}
          saved={save.isSuccess}
          error={save.error}
          onSave={(hours) => save.mutate({ staffId: view.staff_id, hours })}
        />
      ) : null}
    </SettingsPage>
  );
}

/** A manager's setting: the most waiting conversations auto-assignment gives this staff member (empty: the business's default). */
function CapacityForm({ staffId }: { staffId: number }) {
  const utils = trpc.useUtils();
  const availability = trpc.inbox.availability.useQuery();
  const current = availability.data?.staff.find((s) => s.staff_id === staffId);
  const [draft, setDraft] = useState<string | null>(null);
  const save = trpc.inbox.setStaffCapacity.useMutation({
    onSuccess: () => {
      setDraft(null);
      void utils.inbox.availability.invalidate();
    },
  });
  if (!current) return null;
  const value = draft ?? (current.capacity_source === 'own' ? String(current.capacity) : '');
  return (
    <form
      className={styles.capacity}
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate({ staffId, capacity: value.trim() === '' ? null : Number(value) });
      }}
    >
      <label>
        Capacity{' '}
        <input
          type="number"
          className={settings.field}
          min={0}
          max={MAX_CAPACITY}
          step={1}
          value={value}
          placeholder={current.capacity_source === 'business' ? String(current.capacity) : ''}
          onChange={(e) => setDraft(e.target.value)}
        />
      </label>{' '}
      <span className={styles.stateWord}>waiting conversations at most; empty: the business&apos;s default</span>{' '}
      <button type="submit" className={settings.button} disabled={save.isPending}>
        Save capacity
      </button>
      {save.error ? (
        <span role="alert" className={styles.error}>
          {save.error.message}
        </span>
      ) : null}
      {save.isSuccess ? <span role="status">Saved.</span> : null}
    </form>
  );
}
