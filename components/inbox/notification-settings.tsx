'use client';
import { useState, type ReactNode } from 'react';
import { trpc } from '@/components/trpc/client';
import {
  KIND_CHANNELS,
  NOTIFICATION_KIND_DESCRIPTIONS as KIND_DESCRIPTION,
  NOTIFICATION_CHANNELS,
  NOTIFICATION_KINDS,
  resolvePreferences,
  type NotificationChannel,
  type NotificationKind,
  type NotificationPreferences,
} from '@/server/shared/notifications';
import styles from './notification-settings.module.css';
import { SettingsError, SettingsPage } from './settings-page';
import settings from './settings.module.css';

/**
 * `/settings/notifications` (docs/api.md#notifications): what the signed-in staff member is told,
 * per kind and channel — in the inbox (the bell), on the desktop (browser notifications), by email.
 * The waiting digest is email only. `businessSection`: the business-wide email settings (the delay
 * before an email and the digest's threshold), shown under the staff member's own choices.
 */

const KIND_NAME: Record<NotificationKind, string> = {
  unassigned_waiting: 'New conversation waiting',
  client_replied: 'Client replied',
  assigned: 'Assigned to me',
  mentioned: 'Mentioned in a note',
  missed_call: 'Missed call or voicemail',
  webhook_disabled: 'Webhook endpoint switched off',
  waiting_digest: 'Waiting digest',
};
const CHANNEL_NAME: Record<NotificationChannel, string> = { in_app: 'In the inbox', browser: 'Desktop', email: 'Email' };

/** Only the choices that differ from what is stored: what the save sends. */
function changesOf(draft: NotificationPreferences, stored: NotificationPreferences) {
  const out: Partial<Record<NotificationKind, Partial<Record<NotificationChannel, boolean>>>> = {};
  for (const kind of NOTIFICATION_KINDS)
    for (const channel of KIND_CHANNELS[kind])
      if (draft[kind][channel] !== stored[kind][channel]) out[kind] = { ...out[kind], [channel]: draft[kind][channel] };
  return out;
}

export function NotificationSettings({ businessSection }: { businessSection?: ReactNode }) {
  const query = trpc.inbox.notificationPreferences.useQuery();
  const utils = trpc.useUtils();
  // The save answers the choices as they now are: no second read.
  const save = trpc.inbox.setNotificationPreferences.useMutation({
    // Each kind with its own channels, as the query answers (REST's shape); the form fills in the rest.
    onSuccess: (fresh) => utils.inbox.notificationPreferences.setData(undefined, fresh),
  });
  return (
    <SettingsPage title="Notifications">
      <section aria-label="My notifications" className={styles.wide}>
        <h2>What I am told, and where</h2>
        <p className={`${settings.body} ${styles.intro}`}>
          In the inbox: the bell and its count. Desktop: a notification from this browser while the inbox is in the background or
          another conversation is open (enable it from the bell). Email: sent a few minutes later, and only if nobody has read or
          answered the conversation by then. Nothing reaches the desktop or email while you are Away or off shift.
        </p>
        {query.isPending ? <p role="status">Loading…</p> : null}
        <SettingsError error={query.error ? 'Could not load your notification settings.' : null} />
        {query.data ? (
          <PreferencesForm
            key={JSON.stringify(query.data)}
            stored={resolvePreferences(query.data)}
            saving={save.isPending}
            saved={save.isSuccess}
            onSave={(changes) => save.mutate({ preferences: changes })}
          />
        ) : null}
        <SettingsError error={save.error?.message} />
      </section>
      {/* The business-wide section (the email delay, the digest's threshold): the page passes it. */}
      {businessSection}
    </SettingsPage>
  );
}

function PreferencesForm(props: {
  stored: NotificationPreferences;
  saving: boolean;
  saved: boolean;
  onSave: (changes: ReturnType<typeof changesOf>) => void;
}) {
  const { stored, saving, saved, onSave } = props;
  const [draft, setDraft] = useState<NotificationPreferences>(stored);
  const changes = changesOf(draft, stored);
  const changed = Object.keys(changes).length > 0;
  const toggle = (kind: NotificationKind, channel: NotificationChannel, on: boolean) =>
    setDraft((d) => ({ ...d, [kind]: { ...d[kind], [channel]: on } }));
  return (
    <form
      aria-label="My notifications"
      onSubmit={(e) => {
        e.preventDefault();
        onSave(changes);
      }}
    >
      <table className={styles.table}>
        <thead>
          <tr>
            <th scope="col">Kind</th>
            {NOTIFICATION_CHANNELS.map((c) => (
              <th scope="col" key={c} className={styles.channel}>
                {CHANNEL_NAME[c]}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {NOTIFICATION_KINDS.map((kind) => (
            <tr key={kind} data-kind={kind}>
              <th scope="row" className={styles.kind}>
                <span className={styles.kindName}>{KIND_NAME[kind]}</span>
                <span className={styles.description}>{KIND_DESCRIPTION[kind]}</span>
              </th>
              {NOTIFICATION_CHANNELS.map((channel) => (
                <td key={channel} className={styles.channel}>
                  {KIND_CHANNELS[kind].includes(channel) ? (
                    <input
                      type="checkbox"
                      aria-label={`${KIND_NAME[kind]}: ${CHANNEL_NAME[channel]}`}
                      checked={draft[kind][channel]}
                      onChange={(e) => toggle(kind, channel, e.target.checked)}
                    />
                  ) : (
                    <span className={styles.none} title={`${KIND_NAME[kind]} is email only`}>
                      —
                    </span>
                  )}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <div className={settings.row}>
        <button type="submit" className={`${settings.button} ${settings.primary}`} disabled={saving || !changed}>
          Save
        </button>
        {changed ? (
          <button type="button" className={settings.button} onClick={() => setDraft(stored)}>
            Undo changes
          </button>
        ) : null}
        {saved && !changed ? <span role="status">Saved.</span> : null}
      </div>
    </form>
  );
}
