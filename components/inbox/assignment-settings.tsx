'use client';
import { useState } from 'react';
import { trpc } from '@/components/trpc/client';
import { SettingsError, SettingsPage } from './settings-page';
import styles from './settings.module.css';

/**
 * Auto-assignment (docs/api.md#auto-assignment): the business's policy, each staff member's
 * capacity (conversations waiting for their reply), whether going Away hands conversations back, and
 * each location's own policy.
 */

type Policy = 'off' | 'round_robin' | 'balanced';
const POLICY_NAMES: Record<Policy, string> = {
  off: 'Off: staff pick conversations themselves',
  round_robin: 'Round robin: in turn',
  balanced: 'Balanced: whoever has the fewest waiting',
};
const POLICIES = Object.keys(POLICY_NAMES) as Policy[];
const PolicyOptions = () =>
  POLICIES.map((p) => (
    <option key={p} value={p}>
      {POLICY_NAMES[p]}
    </option>
  ));

export function AssignmentSettings() {
  const query = trpc.inbox.assignmentSettings.useQuery();
  const data = query.data;
  // Each save answers the settings as they now are: no second read.
  const utils = trpc.useUtils();
  const setBusiness = trpc.inbox.setBusinessAssignment.useMutation({
    onSuccess: (fresh) => utils.inbox.assignmentSettings.setData(undefined, fresh),
  });
  const setLocation = trpc.inbox.setLocationAssignment.useMutation({
    onSuccess: (fresh) => utils.inbox.assignmentSettings.setData(undefined, fresh),
  });
  return (
    <SettingsPage title="Auto-assignment">
      <section aria-label="Business auto-assignment">
        <h2>Who new conversations go to</h2>
        <p className={styles.body}>
          When a client writes and nobody holds the conversation, it goes at once to a colleague of its location who is on shift,
          not Away, and has fewer conversations waiting for their reply than the capacity. When nobody can take it, it waits and
          is given out oldest first as soon as someone can. A conversation someone holds is never taken from them.
        </p>
        {query.isPending ? <p role="status">Loading…</p> : null}
        {data ? (
          <BusinessForm
            key={`${data.assignment_policy}-${data.assignment_capacity}-${data.hand_back_on_away}`}
            value={data}
            saving={setBusiness.isPending}
            saved={setBusiness.isSuccess}
            onSave={(v) => setBusiness.mutate(v)}
          />
        ) : null}
        <SettingsError error={setBusiness.error?.message} />
      </section>
      <section aria-label="Locations">
        <h2>Locations</h2>
        {data?.locations.length === 0 ? <p>No locations: the business&apos;s policy applies to every conversation.</p> : null}
        <ul className={styles.list}>
          {data?.locations.map((l) => (
            <li key={l.location_id} className={styles.item}>
              <label className={styles.itemHead}>
                <strong>{l.name}</strong>
                <select
                  className={styles.field}
                  aria-label={`${l.name} policy`}
                  value={l.assignment_policy ?? ''}
                  disabled={setLocation.isPending}
                  onChange={(e) =>
                    setLocation.mutate({
                      locationId: l.location_id,
                      assignment_policy: (e.target.value || null) as Policy | null,
                    })
                  }
                >
                  <option value="">The business&apos;s ({POLICY_NAMES[data.assignment_policy].split(':')[0]})</option>
                  <PolicyOptions />
                </select>
              </label>
            </li>
          ))}
        </ul>
        <SettingsError error={setLocation.error?.message} />
      </section>
    </SettingsPage>
  );
}

type BusinessValue = { assignment_policy: Policy; assignment_capacity: number; hand_back_on_away: boolean };

/** The business's three settings; Save sends them. Keyed by the stored value so it resets after a save. */
function BusinessForm(props: { value: BusinessValue; saving: boolean; saved: boolean; onSave: (v: BusinessValue) => void }) {
  // Only the three fields: the settings read also list the locations, which the save refuses.
  const [draft, setDraft] = useState<BusinessValue>({
    assignment_policy: props.value.assignment_policy,
    assignment_capacity: props.value.assignment_capacity,
    hand_back_on_away: props.value.hand_back_on_away,
  });
  const { value, saving, saved, onSave } = props;
  const changed =
    draft.assignment_policy !== value.assignment_policy ||
    draft.assignment_capacity !== value.assignment_capacity ||
    draft.hand_back_on_away !== value.hand_back_on_away;
  return (
    <form
      aria-label="Business auto-assignment"
      className={styles.item}
      onSubmit={(e) => {
        e.preventDefault();
        onSave(draft);
      }}
    >
      <label>
        Policy{' '}
        <select
          className={styles.field}
          value={draft.assignment_policy}
          onChange={(e) => setDraft({ ...draft, assignment_policy: e.target.value as Policy })}
        >
          <PolicyOptions />
        </select>
      </label>
      <label>
        Capacity: conversations waiting for one person&apos;s reply{' '}
        <input
          type="number"
          className={styles.field}
          min={0}
          max={1000}
          step={1}
          required
          value={draft.assignment_capacity}
          onChange={(e) => setDraft({ ...draft, assignment_capacity: e.target.valueAsNumber })}
        />
      </label>
      <label>
        <input
          type="checkbox"
          checked={draft.hand_back_on_away}
          onChange={(e) => setDraft({ ...draft, hand_back_on_away: e.target.checked })}
        />{' '}
        Going Away hands one&apos;s waiting conversations back to colleagues
      </label>
      <div className={styles.row}>
        <button type="submit" className={`${styles.button} ${styles.primary}`} disabled={saving || !changed}>
          Save
        </button>
        {saved && !changed ? <span role="status">Saved.</span> : null}
      </div>
    </form>
  );
}
