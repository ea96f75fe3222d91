'use client';
import { useState } from 'react';
import type { OptInSource } from '@/db/schema/enums';
import { trpc } from '@/components/trpc/client';
import styles from './opt-out.module.css';

/** How the client asked, as staff pick it when opting them back in (docs/api.md#opt-out). */
export const OPT_IN_SOURCE_LABEL: Record<OptInSource, string> = {
  in_person: 'In person',
  phone_call: 'Phone call',
  paper_form: 'Paper form',
  web_form: 'Web form',
  email: 'Email',
  text_message: 'Text message',
};

/**
 * Staff set a client's opt-out by hand (docs/api.md#opt-out), beside its state in the client panel.
 * Opting out is one click (honouring a request); opting back in asks how the client asked and in
 * which words, since only the client may ask for texts or emails again: the opt-in is recorded
 * with them and the staff member, and the server refuses to lift an opt-out the client made without.
 */
export function OptOutControl({
  clientId,
  channel,
  optedOut,
  hasAddress,
}: {
  clientId: number;
  channel: 'sms' | 'email';
  optedOut: boolean;
  hasAddress: boolean;
}) {
  const [confirming, setConfirming] = useState(false);
  const [source, setSource] = useState<OptInSource>('in_person');
  const [note, setNote] = useState('');
  const utils = trpc.useUtils();
  const set = trpc.inbox.setClientOptOut.useMutation({
    onSuccess: () => {
      setConfirming(false);
      setNote('');
    },
    onSettled: () => void utils.inbox.invalidate(),
  });
  if (!hasAddress) return null;
  const what = channel === 'sms' ? 'texts' : 'emails';
  return (
    <span className={styles.control}>
      {!optedOut ? (
        <button
          type="button"
          className={styles.small}
          disabled={set.isPending}
          aria-label={`Opt out of ${what}`}
          onClick={() => set.mutate({ clientId, channel, optedOut: true })}
        >
          Opt out
        </button>
      ) : confirming ? (
        <form
          aria-label={`Opt back in to ${what}`}
          className={styles.optIn}
          onSubmit={(e) => {
            e.preventDefault();
            set.mutate({ clientId, channel, optedOut: false, source, note: note.trim() });
          }}
        >
          <span>Only if the client asked for {what} again.</span>
          <label>
            How they asked{' '}
            <select value={source} onChange={(e) => setSource(e.target.value as OptInSource)}>
              {Object.entries(OPT_IN_SOURCE_LABEL).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <label>
            Their words or the circumstances{' '}
            <input
              required
              maxLength={2000}
              value={note}
              placeholder="e.g. Asked at the front desk to get reminders again"
              onChange={(e) => setNote(e.target.value)}
            />
          </label>
          <span>
            <button type="submit" className={styles.small} disabled={set.isPending || !note.trim()}>
              Confirm opt-in
            </button>{' '}
            <button type="button" className={styles.small} onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </span>
        </form>
      ) : (
        <button type="button" className={styles.small} aria-label={`Opt back in to ${what}`} onClick={() => setConfirming(true)}>
          Opt back in
        </button>
      )}
      {set.error ? (
        <span role="alert" className={styles.error}>
          Not saved: {set.error.message}
        </span>
      ) : null}
    </span>
  );
}
