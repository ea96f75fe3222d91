'use client';
import { useState } from 'react';
import { trpc } from '@/components/trpc/client';
import { SettingsError, SettingsPage } from './settings-page';
import styles from './settings.module.css';

type Window = { start: string; end: string };
type Preset = Window & { id: string; name: string; source: string };

/**
 * Quiet hours settings (docs/api.md#quiet-hours): the business's sending window and each location's
 * own, each set from a preset or as two times. Automated texts queued outside the recipient's window
 * wait for it to open; replies in a live conversation are not held.
 */
export function QuietHoursSettings() {
  const utils = trpc.useUtils();
  const settings = trpc.inbox.sendingWindows.useQuery();
  const refresh = { onSuccess: () => void utils.inbox.sendingWindows.invalidate() };
  const setBusiness = trpc.inbox.setBusinessSendingWindow.useMutation(refresh);
  const setLocation = trpc.inbox.setLocationSendingWindow.useMutation(refresh);
  const error = (setBusiness.error ?? setLocation.error)?.message;
  const data = settings.data;

  return (
    <SettingsPage title="Quiet hours">
      <section aria-label="Business sending window">
        <h2>Sending window</h2>
        <p className={styles.body}>
          Campaigns, reminders, transactional texts, marketing and review requests go out only inside this window of the
          client&apos;s local time (their own time zone, else their number&apos;s, else the location&apos;s). One queued outside
          it is held until it opens, and the timeline says so. Replies in a conversation where the client wrote within a day are
          not held. The presets follow the US federal rule and the stricter windows some states set; they are not legal advice.
        </p>
        {settings.isPending ? <p role="status">Loading…</p> : null}
        {data ? (
          <WindowForm
            label="Business"
            value={data.sending_window}
            presets={data.presets}
            saving={setBusiness.isPending}
            onSave={(w) => setBusiness.mutate(w)}
          />
        ) : null}
        <SettingsError error={error} />
      </section>
      <section aria-label="Locations">
        <h2>Locations</h2>
        {data?.locations.length === 0 ? <p>No locations: the business&apos;s window applies to every client.</p> : null}
        <ul className={styles.list}>
          {data?.locations.map((l) => (
            <li key={l.location_id} className={styles.item} data-testid="location-window">
              <div className={styles.itemHead}>
                <strong>{l.name}</strong>
                <span>{l.timezone ?? data.time_zone}</span>
              </div>
              <p className={styles.body}>
                {l.sending_window
                  ? `Own window ${l.sending_window.start}–${l.sending_window.end}`
                  : `The business's window (${data.sending_window.start}–${data.sending_window.end})`}
              </p>
              <WindowForm
                label={l.name}
                value={l.sending_window ?? data.sending_window}
                presets={data.presets}
                saving={setLocation.isPending}
                onSave={(w) => setLocation.mutate({ locationId: l.location_id, window: w })}
              />
              {l.sending_window ? (
                <button
                  type="button"
                  className={styles.button}
                  onClick={() => setLocation.mutate({ locationId: l.location_id, window: null })}
                >
                  Use the business&apos;s window
                </button>
              ) : null}
            </li>
          ))}
        </ul>
      </section>
    </SettingsPage>
  );
}

/** A window as a preset or two times; Save sends it. Keyed by the stored value so it resets after a save. */
function WindowForm(props: { label: string; value: Window; presets: Preset[]; saving: boolean; onSave: (w: Window) => void }) {
  return <WindowFields key={`${props.value.start}-${props.value.end}`} {...props} />;
}

function WindowFields({ label, value, presets, saving, onSave }: Parameters<typeof WindowForm>[0]) {
  const [draft, setDraft] = useState<Window>(value);
  const preset = presets.find((p) => p.start === draft.start && p.end === draft.end);
  return (
    <form
      className={styles.row}
      aria-label={`${label} sending window`}
      onSubmit={(e) => {
        e.preventDefault();
        onSave(draft);
      }}
    >
      <label>
        Preset{' '}
        <select
          className={styles.field}
          value={preset?.id ?? 'custom'}
          onChange={(e) => {
            const chosen = presets.find((p) => p.id === e.target.value);
            if (chosen) setDraft({ start: chosen.start, end: chosen.end });
          }}
        >
          {presets.map((p) => (
            <option key={p.id} value={p.id} title={p.source}>
              {p.name}
            </option>
          ))}
          <option value="custom">Custom</option>
        </select>
      </label>
      <label>
        From{' '}
        <input
          type="time"
          className={styles.field}
          value={draft.start}
          required
          onChange={(e) => setDraft({ ...draft, start: e.target.value })}
        />
      </label>
      <label>
        Until{' '}
        <input
          type="time"
          className={styles.field}
          value={draft.end === '24:00' ? '23:59' : draft.end}
          required
          onChange={(e) => setDraft({ ...draft, end: e.target.value })}
        />
      </label>
      <button
        type="submit"
        className={`${styles.button} ${styles.primary}`}
        disabled={saving || (draft.start === value.start && draft.end === value.end)}
      >
        Save
      </button>
    </form>
  );
}
