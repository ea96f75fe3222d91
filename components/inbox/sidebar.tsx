'use client';
import { trpc } from '@/components/trpc/client';
import { CONVERSATION_STATUSES } from '@/server/shared/conversations';
import styles from './inbox.module.css';
import type { View } from './types';

const STATUS_NAMES = { open: 'Open', pending: 'Pending', snoozed: 'Snoozed', resolved: 'Resolved' } as const;
const ASSIGNMENTS = [
  ['mine', 'Mine'],
  ['unassigned', 'Unassigned'],
  ['all', 'All'],
] as const;
const CHANNEL_NAMES = { sms: 'SMS', email: 'Email', voice: 'Calls' } as const;

/** Views with their counts (from `inbox.filters`, refreshed by live events). */
export function Sidebar({ view, onChange }: { view: View; onChange: (view: View) => void }) {
  const filters = trpc.inbox.filters.useQuery();
  const count = <T extends string>(list: { value: T; count: number }[] | undefined, value: T) =>
    list?.find((x) => x.value === value)?.count;
  const data = filters.data;

  const item = (label: string, pressed: boolean, n: number | undefined, next: View, key: string | number = label) => (
    <button key={key} type="button" className={styles.item} aria-pressed={pressed} onClick={() => onChange(next)}>
      <span>{label}</span>
      {n !== undefined ? <span className={styles.count}>{n}</span> : null}
    </button>
  );

  return (
    <>
      {filters.error ? (
        <p role="alert" className={`${styles.state} ${styles.error}`}>
          Counts unavailable
        </p>
      ) : null}
      <div className={styles.sideGroup} role="group" aria-label="Status">
        <h2>Status</h2>
        {/* Flagged, Mentions and Needs attention span every status, so while one is on no status is selected; choosing one leaves it. */}
        {CONVERSATION_STATUSES.map((s) =>
          item(
            STATUS_NAMES[s],
            !view.flagged && !view.mentioned && !view.needsAttention && view.status === s,
            count(data?.statuses, s),
            { ...view, status: s, flagged: undefined, mentioned: undefined, needsAttention: undefined },
          ),
        )}
      </div>
      <div className={styles.sideGroup} role="group" aria-label="Assignment">
        <h2>Assigned</h2>
        {ASSIGNMENTS.map(([value, label]) =>
          item(label, view.assignment === value, count(data?.assignments, value), { ...view, assignment: value }),
        )}
        {item('Unread', view.unread === true, data?.unread, { ...view, unread: view.unread ? undefined : true })}
        {item('Flagged', view.flagged === true, data?.flagged, { ...view, flagged: view.flagged ? undefined : true })}
        {item('Mentions', view.mentioned === true, data?.mentions, { ...view, mentioned: view.mentioned ? undefined : true })}
        {item('Needs attention', view.needsAttention === true, data?.needs_attention, {
          ...view,
          needsAttention: view.needsAttention ? undefined : true,
        })}
        {item('Possible opt-out', view.possibleOptOut === true, data?.possible_opt_out, {
          ...view,
          possibleOptOut: view.possibleOptOut ? undefined : true,
        })}
      </div>
      <div className={styles.sideGroup} role="group" aria-label="Channel">
        <h2>Channel</h2>
        {(['sms', 'email', 'voice'] as const).map((ch) =>
          item(CHANNEL_NAMES[ch], view.channel === ch, count(data?.channels, ch), {
            ...view,
            channel: view.channel === ch ? undefined : ch,
          }),
        )}
      </div>
      {data?.locations.length ? (
        <div className={styles.sideGroup} role="group" aria-label="Location">
          <h2>Location</h2>
          {data.locations.map((l) =>
            // Keyed by id: two locations may share a name.
            item(
              l.name,
              view.location_id === l.location_id,
              l.count,
              { ...view, location_id: view.location_id === l.location_id ? undefined : l.location_id },
              l.location_id,
            ),
          )}
        </div>
      ) : null}
      {data?.labels.length ? (
        <div className={styles.sideGroup} role="group" aria-label="Label">
          <h2>Labels</h2>
          {data.labels.map((l) =>
            item(l.value, view.label === l.value, l.count, { ...view, label: view.label === l.value ? undefined : l.value }),
          )}
        </div>
      ) : null}
    </>
  );
}
