'use client';
import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { trpc } from '@/components/trpc/client';
import { MAX_SMS_LENGTH } from '@/server/shared/limits';
import { smsSegments } from '@/server/shared/sms-segments';
import {
  clientLabel,
  errorText,
  httpUrl,
  isBadStatus,
  isGoodStatus,
  shortTime,
  statusLabel,
  type PhoneMessage,
  type SandboxClient,
} from './format';
import styles from './sandbox.module.css';

/**
 * The client's phone: the SMS thread as the client sees it (their own texts on the right, the
 * business's on the left with delivery status), and a box to text back as them.
 */
export function Phone({ client }: { client: SandboxClient }) {
  const utils = trpc.useUtils();
  const thread = trpc.sandbox.thread.useQuery({ clientId: client.clientId }, { refetchInterval: 3_000, staleTime: 1_000 });
  const [body, setBody] = useState('');
  const reply = trpc.sandbox.replySms.useMutation({
    onSuccess: () => {
      setBody('');
      void utils.sandbox.thread.invalidate({ clientId: client.clientId });
      void utils.sandbox.clients.invalidate();
    },
  });
  const name = clientLabel(client);
  const messages = thread.data?.messages ?? [];

  // Follow the newest message, as a phone does.
  const scroller = useRef<HTMLOListElement>(null);
  const last = messages.at(-1);
  useEffect(() => {
    const el = scroller.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [last?.id, last?.status]);

  const send = (e?: FormEvent) => {
    e?.preventDefault();
    const text = body.trim();
    if (!text || reply.isPending) return;
    reply.mutate({ clientId: client.clientId, body: text });
  };
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) send(e);
  };
  const segments = body ? smsSegments(body) : null;
  const canText = Boolean(client.phone) && thread.data?.businessNumber != null;

  return (
    <div className={styles.phoneStage}>
      <section className={styles.phone} aria-label={`${name}'s phone`}>
        <div className={styles.phoneTop}>
          <strong>{thread.data ? (thread.data.businessNumber ?? 'No business number') : ' '}</strong>
          <span>{client.phone ? `Messages · this phone is ${client.phone}` : 'This client has no phone number'}</span>
        </div>

        {thread.isPending ? (
          <p className={styles.state} role="status">
            Loading messages…
          </p>
        ) : thread.error && !thread.data ? (
          <div className={styles.error} role="alert">
            Could not load the messages: {errorText(thread.error)}
            <button type="button" className={styles.button} onClick={() => thread.refetch()}>
              Retry
            </button>
          </div>
        ) : (
          <ol className={styles.bubbles} ref={scroller} aria-label="SMS thread" aria-live="polite">
            {messages.length === 0 ? <li className={styles.state}>No texts yet. Write the first one as {name}.</li> : null}
            {messages.map((m) => (
              <Bubble key={m.id} message={m} />
            ))}
          </ol>
        )}

        <form className={styles.composer} onSubmit={send}>
          {client.optedOutSms ? (
            <div className={styles.notice}>
              {name} has opted out of SMS (texts from the business fail). Text START to opt back in.
            </div>
          ) : null}
          {thread.data && !thread.data.businessNumber ? (
            <div className={styles.notice}>The business has no SMS number, so there is nothing to text.</div>
          ) : null}
          <div className={styles.composerRow}>
            <textarea
              className={styles.textarea}
              aria-label="Reply as client"
              placeholder={`Reply as ${name}`}
              value={body}
              maxLength={MAX_SMS_LENGTH}
              rows={2}
              onChange={(e) => setBody(e.target.value)}
              onKeyDown={onKeyDown}
              disabled={!canText}
            />
            <button
              type="submit"
              className={`${styles.button} ${styles.primary}`}
              aria-label="Send SMS reply"
              disabled={!canText || !body.trim() || reply.isPending}
            >
              {reply.isPending ? 'Sending…' : 'Send'}
            </button>
          </div>
          <div className={styles.composerFoot}>
            <span>Enter sends · Shift+Enter for a new line</span>
            <span>{segments ? `${body.length}/${MAX_SMS_LENGTH} · ${segments.segments} SMS (${segments.encoding})` : ''}</span>
          </div>
          {reply.error ? (
            <div className={styles.error} role="alert">
              Not sent: {errorText(reply.error)}
            </div>
          ) : null}
          {thread.error && thread.data ? (
            <div className={`${styles.muted} ${styles.small}`} role="status">
              Could not refresh: {errorText(thread.error)}
            </div>
          ) : null}
        </form>
      </section>
    </div>
  );
}

function Bubble({ message: m }: { message: PhoneMessage }) {
  // Inbound to the business = written on this phone: the right-hand side, as on a real phone.
  const mine = m.direction === 'inbound';
  const status = mine ? 'Sent' : statusLabel(m.status);
  const tone = mine ? '' : isBadStatus(m.status) ? styles.statusBad : isGoodStatus(m.status) ? styles.statusGood : '';
  const error = !mine && (m.errorCode || m.errorMessage) ? ` (${[m.errorCode, m.errorMessage].filter(Boolean).join(': ')})` : '';
  return (
    <li
      className={`${styles.bubbleRow} ${mine ? styles.mine : styles.theirs}`}
      data-direction={m.direction}
      data-testid="sms-bubble"
    >
      <div className={styles.bubble}>
        {m.content}
        {m.attachments.map((a, i) => {
          const href = httpUrl(a.url);
          return (
            <div key={i} className={styles.small}>
              📎{' '}
              {href ? (
                <a href={href} target="_blank" rel="noopener noreferrer nofollow">
                  {a.filename}
                </a>
              ) : (
                a.filename
              )}
            </div>
          );
        })}
      </div>
      <div className={styles.bubbleMeta}>
        {shortTime(m.sentAt)}
        {!mine && m.staffName ? ` · ${m.staffName}` : ''} ·{' '}
        <span className={tone} data-testid="sms-status">
          {status}
          {error}
        </span>
      </div>
    </li>
  );
}
