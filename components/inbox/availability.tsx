'use client';
import { trpc } from '@/components/trpc/client';
import { availabilityState } from '@/server/shared/staff-availability';
import styles from './availability.module.css';
import type { Me } from './types';

/**
 * Who is available (docs/api.md#staff-availability), in the inbox's top bar: the signed-in staff
 * member's Away switch with their state (Available, Away, Off shift), and the team's states with
 * how many conversations wait for each one's reply. A colleague's switch reaches every open inbox
 * through the live stream (`staff.updated`, use-live-inbox.ts); shifts start and end with the
 * clock, so the states are also read again every minute.
 */

const SHIFT_REFRESH_MS = 60_000;

/** Every active staff member's state; shared by the top bar and the assignee picker (one query). */
export function useAvailability() {
  return trpc.inbox.availability.useQuery(undefined, { refetchInterval: SHIFT_REFRESH_MS });
}

type State = ReturnType<typeof availabilityState>;
const DOT: Record<State, string> = { Available: styles.available!, Away: styles.away!, 'Off shift': styles.offShift! };

export function AvailabilityBar({ me }: { me: Me }) {
  const utils = trpc.useUtils();
  const availability = useAvailability();
  const setAway = trpc.inbox.setAway.useMutation({ onSettled: () => void utils.inbox.availability.invalidate() });
  const staff = availability.data?.staff ?? [];
  const mine = staff.find((s) => s.staff_id === me.staffId);
  // The switch shows what was asked at once; the state follows once the server answers.
  const away = setAway.isPending ? setAway.variables.away : (mine?.away ?? false);
  const state = mine ? availabilityState({ ...mine, away }) : null;
  const colleagues = staff.filter((s) => s.staff_id !== me.staffId);
  const availableCount = colleagues.filter((s) => s.available).length;

  return (
    <div className={styles.bar}>
      <button
        type="button"
        role="switch"
        aria-checked={away}
        className={styles.switch}
        disabled={!mine || setAway.isPending}
        onClick={() => setAway.mutate({ away: !away })}
        title={away ? 'You get no new conversations while away' : 'Go away: no new conversations are given to you'}
      >
        <span className={styles.track} aria-hidden="true" />
        Away
      </button>
      <span className={styles.state} data-testid="my-availability" aria-live="polite">
        {state ? (
          <>
            <span className={`${styles.dot} ${DOT[state]}`} aria-hidden="true" />
            {state}
          </>
        ) : null}
      </span>
      {setAway.error ? (
        <span role="alert" className={styles.error}>
          {setAway.error.message}
        </span>
      ) : null}
      <details className={styles.team}>
        <summary>
          Team <span className={styles.count}>{availability.data ? `${availableCount}/${colleagues.length}` : ''}</span>
        </summary>
        <div className={styles.panel}>
          <h2 id="team-heading">Colleagues</h2>
          {colleagues.length === 0 ? <p className={styles.none}>No colleagues yet.</p> : null}
          <ul aria-labelledby="team-heading" data-testid="team-states">
            {colleagues.map((s) => {
              const st = availabilityState(s);
              return (
                <li key={s.staff_id}>
                  <span className={`${styles.dot} ${DOT[st]}`} aria-hidden="true" />
                  <span className={styles.name}>{s.name}</span>
                  <span className={styles.stateWord}>{st}</span>
                  <span className={styles.waiting}>{s.waiting} waiting</span>
                </li>
              );
            })}
          </ul>
          <a href="/settings/staff-schedules">Staff schedules</a>
        </div>
      </details>
    </div>
  );
}

/**
 * The assignee picker's staff grouped by state (Available, Away, Off shift; Not active for a former
 * colleague still assigned), each option still just the name: a screen reader announces the group.
 * Before the states load, one plain list.
 */
export function groupByAvailability<S extends { staff_id: number; active: boolean }>(
  list: S[],
  states: { staff_id: number; away: boolean; on_shift: boolean }[] | undefined,
): { label: string | null; staff: S[] }[] {
  if (!states) return [{ label: null, staff: list }];
  const byId = new Map(states.map((s) => [s.staff_id, s]));
  const labelOf = (s: S) => {
    const state = byId.get(s.staff_id);
    if (!s.active) return 'Not active';
    // Added since the states were read: shown, under no state, until the next read.
    return state ? availabilityState(state) : 'Other';
  };
  return ['Available', 'Away', 'Off shift', 'Other', 'Not active']
    .map((label) => ({ label, staff: list.filter((s) => labelOf(s) === label) }))
    .filter((g) => g.staff.length > 0);
}
