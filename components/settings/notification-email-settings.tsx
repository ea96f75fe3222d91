'use client';
import { useState } from 'react';
import { trpc } from '@/components/trpc/client';
import {
  DEFAULT_WAITING_DIGEST_MINUTES,
  MAX_NOTIFICATION_EMAIL_DELAY_MINUTES,
  MAX_WAITING_DIGEST_MINUTES,
} from '@/server/shared/notifications';
import { SettingsError } from '@/components/inbox/settings-page';
import settings from '@/components/inbox/settings.module.css';
import styles from './notification-email-settings.module.css';

/**
 * The business's email notification settings (docs/api.md#email-notifications-and-the-waiting-digest):
 * how long an email notification waits for the conversation to be read or answered, and the waiting
 * digest's threshold in business minutes, or no digest. On the Notifications settings page; saving
 * needs the owner or manager role, and the server's refusal is shown.
 */

type Value = { notification_email_delay_minutes: number; waiting_digest_minutes: number | null };

export function NotificationEmailSettings() {
  const query = trpc.inbox.notificationEmailSettings.useQuery();
  const utils = trpc.useUtils();
  const save = trpc.inbox.setNotificationEmailSettings.useMutation({
    onSuccess: (fresh) => utils.inbox.notificationEmailSettings.setData(undefined, fresh),
  });
  const data = query.data;
  return (
    <section aria-label="Email notifications">
      <h2>Email notifications</h2>
      {query.isPending ? <p role="status">Loading…</p> : null}
      <SettingsError error={query.error?.message} />
      {data ? (
        <EmailForm
          key={`${data.notification_email_delay_minutes}-${data.waiting_digest_minutes}`}
          value={data}
          saving={save.isPending}
          saved={save.isSuccess}
          onSave={(v) => save.mutate(v)}
        />
      ) : null}
      <SettingsError error={save.error?.message} />
    </section>
  );
}

/** The two settings; Save sends them. Keyed by the stored value so it resets after a save. */
function EmailForm(props: { value: Value; saving: boolean; saved: boolean; onSave: (v: Value) => void }) {
  const { value, saving, saved, onSave } = props;
  const [delay, setDelay] = useState(value.notification_email_delay_minutes);
  const [digestOn, setDigestOn] = useState(value.waiting_digest_minutes !== null);
  const [threshold, setThreshold] = useState(value.waiting_digest_minutes ?? DEFAULT_WAITING_DIGEST_MINUTES);
  const draft: Value = { notification_email_delay_minutes: delay, waiting_digest_minutes: digestOn ? threshold : null };
  const changed =
    draft.notification_email_delay_minutes !== value.notification_email_delay_minutes ||
    draft.waiting_digest_minutes !== value.waiting_digest_minutes;
  return (
    <form
      aria-label="Email notifications"
      className={styles.form}
      onSubmit={(e) => {
        e.preventDefault();
        onSave(draft);
      }}
    >
      <p className={styles.help}>
        An email notification waits this long, and is not sent if someone reads or answers the conversation first.
      </p>
      <MinutesField
        label="Wait before emailing"
        unit="minutes"
        min={0}
        max={MAX_NOTIFICATION_EMAIL_DELAY_MINUTES}
        value={delay}
        onChange={setDelay}
      />
      <label className={styles.label}>
        <input type="checkbox" checked={digestOn} onChange={(e) => setDigestOn(e.target.checked)} />
        Send a digest of conversations waiting for a reply, during opening hours
      </label>
      {digestOn ? (
        <MinutesField
          label="Waiting longer than"
          unit="minutes of opening hours"
          min={1}
          max={MAX_WAITING_DIGEST_MINUTES}
          value={threshold}
          onChange={setThreshold}
        />
      ) : null}
      <div className={settings.row}>
        <button type="submit" className={`${settings.button} ${settings.primary}`} disabled={saving || !changed}>
          Save
        </button>
        {saved && !changed ? <span role="status">Saved.</span> : null}
      </div>
    </form>
  );
}

/** A whole number of minutes within the contract's bounds, with its words before and after. */
function MinutesField(props: {
  label: string;
  unit: string;
  min: number;
  max: number;
  value: number;
  onChange: (minutes: number) => void;
}) {
  return (
    <label className={styles.label}>
      {props.label}
      <input
        type="number"
        className={styles.field}
        min={props.min}
        max={props.max}
        step={1}
        required
        value={Number.isNaN(props.value) ? '' : props.value}
        onChange={(e) => props.onChange(e.target.valueAsNumber)}
      />
      {props.unit}
    </label>
  );
}
