'use client';
import { useState, type ReactNode } from 'react';
import type { OptInSource } from '@/db/schema/enums';
import { trpc } from '@/components/trpc/client';
import { MAX_OPT_OUT_NOTE_LENGTH } from '@/server/shared/limits';
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
 * Opting out asks for confirmation and a reason (kept in the opt-out history and shown in the
 * timeline's activity line with who did it); opting back in asks how the client asked and in which
 * words, since only the client may ask for texts or emails again: the opt-in is recorded with them
 * and the staff member, and the server refuses to lift an opt-out the client made without.
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
  const form = (props: Omit<DecisionFormProps, 'note' | 'onNote' | 'pending' | 'onCancel'>) => (
    <DecisionForm {...props} note={note} onNote={setNote} pending={set.isPending} onCancel={() => setConfirming(false)} />
  );
  return (
    <span className={styles.control}>
      {confirming && !optedOut ? (
        form({
          name: `Opt out of ${what}`,
          intro: `No more ${what} will go to this client until they ask for them again. Only the client can undo this.`,
          noteLabel: 'Reason',
          placeholder: 'e.g. Asked at the front desk to stop reminders',
          confirm: 'Confirm opt-out',
          onConfirm: () => set.mutate({ clientId, channel, optedOut: true, note: note.trim() }),
        })
      ) : confirming ? (
        form({
          name: `Opt back in to ${what}`,
          intro: `Only if the client asked for ${what} again.`,
          extra: (
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
          ),
          noteLabel: 'Their words or the circumstances',
          placeholder: 'e.g. Asked at the front desk to get reminders again',
          confirm: 'Confirm opt-in',
          onConfirm: () => set.mutate({ clientId, channel, optedOut: false, source, note: note.trim() }),
        })
      ) : (
        <button
          type="button"
          className={styles.small}
          aria-label={optedOut ? `Opt back in to ${what}` : `Opt out of ${what}`}
          onClick={() => setConfirming(true)}
        >
          {optedOut ? 'Opt back in' : 'Opt out'}
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

type DecisionFormProps = {
  /** The form's accessible name. */
  name: string;
  intro: string;
  extra?: ReactNode;
  noteLabel: string;
  placeholder: string;
  confirm: string;
  note: string;
  onNote: (note: string) => void;
  pending: boolean;
  onConfirm: () => void;
  onCancel: () => void;
};

/** Confirming an opt-out or an opt-in: what it means, a required note (the reason, or the client's words), Confirm and Cancel. */
function DecisionForm(p: DecisionFormProps) {
  return (
    <form
      aria-label={p.name}
      className={styles.optIn}
      onSubmit={(e) => {
        e.preventDefault();
        p.onConfirm();
      }}
    >
      <span>{p.intro}</span>
      {p.extra}
      <label>
        {p.noteLabel}{' '}
        <input
          required
          maxLength={MAX_OPT_OUT_NOTE_LENGTH}
          value={p.note}
          placeholder={p.placeholder}
          onChange={(e) => p.onNote(e.target.value)}
        />
      </label>
      <span>
        <button type="submit" className={styles.small} disabled={p.pending || !p.note.trim()}>
          {p.confirm}
        </button>{' '}
        <button type="button" className={styles.small} onClick={p.onCancel}>
          Cancel
        </button>
      </span>
    </form>
  );
}
