'use client';
import { useState } from 'react';
import { trpc } from '@/components/trpc/client';
import styles from './opt-out.module.css';

/**
 * Staff set a client's opt-out by hand (docs/api.md#opt-out), beside its state in the client panel.
 * Opting out is one click (honouring a request); opting back in asks first, since only the client
 * may ask for texts or emails again.
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
  const utils = trpc.useUtils();
  const set = trpc.inbox.setClientOptOut.useMutation({
    onSettled: () => {
      setConfirming(false);
      void utils.inbox.invalidate();
    },
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
        <span role="group" aria-label={`Opt back in to ${what}`}>
          <span>Only if the client asked for {what} again.</span>{' '}
          <button
            type="button"
            className={styles.small}
            disabled={set.isPending}
            onClick={() => set.mutate({ clientId, channel, optedOut: false })}
          >
            Confirm opt-in
          </button>{' '}
          <button type="button" className={styles.small} onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </span>
      ) : (
        <button type="button" className={styles.small} aria-label={`Opt back in to ${what}`} onClick={() => setConfirming(true)}>
          Opt back in
        </button>
      )}
      {set.error ? (
        <span role="alert" className={styles.error}>
          Not saved
        </span>
      ) : null}
    </span>
  );
}
