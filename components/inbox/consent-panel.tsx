'use client';
import { useState } from 'react';
import type { ConsentSource } from '@/db/schema/enums';
import { trpc } from '@/components/trpc/client';
import styles from './inbox.module.css';
import own from './consent-panel.module.css';

const CHANNELS = [
  { value: 'sms', label: 'Texts' },
  { value: 'email', label: 'Email' },
] as const;
const PURPOSES = [
  { value: 'marketing', label: 'Marketing' },
  { value: 'transactional', label: 'Transactional' },
] as const;
const SOURCE_LABEL: Record<ConsentSource, string> = {
  in_person: 'In person',
  phone_call: 'Phone call',
  paper_form: 'Paper form',
  web_form: 'Web form',
  keyword: 'Reply keyword',
  import: 'Import',
  api: 'API',
  staff: 'Staff',
};
/** What staff pick from: how the client told them (the record also names the staff member). */
const STAFF_SOURCES = ['in_person', 'phone_call', 'paper_form', 'web_form'] as const satisfies readonly ConsentSource[];

const dateOf = (iso: string) => new Date(iso).toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric' });

/**
 * The client's consent (docs/api.md#consent): per channel, the current marketing and transactional
 * record, a form to record what the client said, and the history. Marketing, campaign and
 * review-request messages go out only with marketing consent given for their channel. An opt-out
 * overrides any consent (a consent record never lifts one): a channel the client is opted out of
 * says so, the record on file shown as set aside, not as a green "Given".
 */
export function ConsentPanel({ conversationId }: { conversationId: number }) {
  const consents = trpc.inbox.consents.useQuery({ conversationId });
  const details = trpc.inbox.conversation.useQuery({ conversationId });
  const optedOut = { sms: !!details.data?.opted_out_sms, email: !!details.data?.opted_out_email };
  const [recording, setRecording] = useState(false);
  if (consents.isPending) return <p className={styles.state}>Loading consent…</p>;
  if (consents.error) return <p className={`${styles.state} ${styles.error}`}>Consent unavailable.</p>;
  const current = (channel: string, purpose: string) =>
    consents.data.current.find((c) => c.channel === channel && c.purpose === purpose);
  return (
    <section aria-label="Consent" className={own.panel}>
      <h3 className={own.title}>Consent</h3>
      <dl className={styles.dl}>
        {CHANNELS.flatMap((ch) =>
          PURPOSES.map((p) => {
            const c = current(ch.value, p.value);
            return [
              <dt key={`${ch.value}-${p.value}-t`}>
                {ch.label}, {p.label.toLowerCase()}
              </dt>,
              <dd key={`${ch.value}-${p.value}-d`} data-testid={`consent-${ch.value}-${p.value}`}>
                {optedOut[ch.value] ? (
                  <span className={styles.failed}>
                    Opted out
                    {c ? (
                      <span className={own.setAside}>
                        {' '}
                        · {c.status === 'given' ? 'given' : 'withdrawn'} {dateOf(c.recorded_at)}, not used while opted out
                      </span>
                    ) : null}
                  </span>
                ) : c ? (
                  <span className={c.status === 'given' ? own.given : styles.failed}>
                    {c.status === 'given' ? 'Given' : 'Withdrawn'} · {SOURCE_LABEL[c.source]} · {dateOf(c.recorded_at)}
                  </span>
                ) : (
                  <span className={own.none}>Not on record</span>
                )}
              </dd>,
            ];
          }),
        )}
      </dl>
      {recording ? (
        <ConsentForm conversationId={conversationId} onDone={() => setRecording(false)} />
      ) : (
        <button type="button" className={styles.button} onClick={() => setRecording(true)}>
          Record consent
        </button>
      )}
      {consents.data.history.length > 0 ? (
        <details className={own.history}>
          <summary>History ({consents.data.history.length})</summary>
          <ol>
            {consents.data.history.map((h) => (
              <li key={h.consent_id}>
                {dateOf(h.recorded_at)}: {h.channel === 'sms' ? 'texts' : 'email'}, {h.purpose} {h.status} (
                {SOURCE_LABEL[h.source]}){h.note ? ` — “${h.note}”` : ''}
              </li>
            ))}
          </ol>
        </details>
      ) : null}
    </section>
  );
}

function ConsentForm({ conversationId, onDone }: { conversationId: number; onDone: () => void }) {
  const utils = trpc.useUtils();
  const record = trpc.inbox.recordConsent.useMutation({
    onSuccess: async () => {
      await utils.inbox.consents.invalidate({ conversationId });
      onDone();
    },
  });
  const [channel, setChannel] = useState<'sms' | 'email'>('sms');
  const [purpose, setPurpose] = useState<'marketing' | 'transactional'>('marketing');
  const [status, setStatus] = useState<'given' | 'withdrawn'>('given');
  const [source, setSource] = useState<(typeof STAFF_SOURCES)[number]>('in_person');
  const [note, setNote] = useState('');
  return (
    <form
      aria-label="Record consent"
      className={own.form}
      onSubmit={(e) => {
        e.preventDefault();
        record.mutate({ conversationId, channel, purpose, status, source, note: note.trim() || null });
      }}
    >
      <label>
        Channel
        <select className={styles.select} value={channel} onChange={(e) => setChannel(e.target.value as typeof channel)}>
          {CHANNELS.map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Purpose
        <select className={styles.select} value={purpose} onChange={(e) => setPurpose(e.target.value as typeof purpose)}>
          {PURPOSES.map((p) => (
            <option key={p.value} value={p.value}>
              {p.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Consent
        <select className={styles.select} value={status} onChange={(e) => setStatus(e.target.value as typeof status)}>
          <option value="given">Given</option>
          <option value="withdrawn">Withdrawn</option>
        </select>
      </label>
      <label>
        How
        <select className={styles.select} value={source} onChange={(e) => setSource(e.target.value as typeof source)}>
          {STAFF_SOURCES.map((s) => (
            <option key={s} value={s}>
              {SOURCE_LABEL[s]}
            </option>
          ))}
        </select>
      </label>
      <label className={own.wide}>
        Wording or note
        <textarea
          className={styles.textarea}
          maxLength={2000}
          value={note}
          placeholder="e.g. Signed the front-desk form: “Yes, text me offers”"
          onChange={(e) => setNote(e.target.value)}
        />
      </label>
      {record.error ? (
        <p role="alert" className={`${styles.error} ${own.wide}`}>
          {record.error.message}
        </p>
      ) : null}
      <div className={own.wide}>
        <button type="submit" className={`${styles.button} ${styles.primary}`} disabled={record.isPending}>
          Save
        </button>{' '}
        <button type="button" className={styles.button} onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
