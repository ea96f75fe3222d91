'use client';
import { useState } from 'react';
import { trpc } from '@/components/trpc/client';
import { APPOINTMENT_REPLY_WORDS } from '@/server/shared/appointment-replies';
import { formatInZone } from '@/server/shared/zoned-time';
import { staffErrorText } from '@/server/shared/provider-errors';
import { ReminderFor } from './appointments-card';
import { EmailFrame } from './email-frame';
import { EditScheduled, FailedFix, stateClasses, undeliveredState } from './message-fixes';
import { MmsMedia } from './mms-media';
import { clockTime, describeError, duration, FAILED_STATUSES, splitMatches, STATUS_LABEL } from './format';
import styles from './inbox.module.css';
import type { MessageItem } from './types';

/** Text with search matches marked: always rendered as text, never as HTML. */
export function Highlighted({ text, term }: { text: string; term: string }) {
  return (
    <>
      {splitMatches(text, term).map((part, i) =>
        part.match ? (
          <mark key={i} className={styles.hit}>
            {part.text}
          </mark>
        ) : (
          part.text
        ),
      )}
    </>
  );
}

function StatusLine({ m }: { m: MessageItem }) {
  const status = m.message_status as string;
  const failed = FAILED_STATUSES.has(status);
  // Plain words for the provider's code (also for rows stored as a bare "Twilio error NNNNN").
  const error = failed ? staffErrorText(m.error_code, m.error_message) : null;
  const who = m.direction === 'outbound' ? (m.staff_name ?? (m.sender_type === 'system' ? 'Automated' : null)) : null;
  return (
    <span className={styles.meta}>
      {who ? <span>{who}</span> : null}
      <time dateTime={m.sent_at}>{clockTime(m.sent_at)}</time>
      {status === 'scheduled' && m.send_at ? (
        <ScheduledActions m={m} sendAt={m.send_at} />
      ) : m.direction === 'outbound' && m.message_type !== 'NOTE' ? (
        <span className={failed ? styles.failed : undefined} data-testid="message-status" title={error ?? undefined}>
          {/* A canceled scheduled message's reason already says "Canceled: …" or "Canceled before …". */}
          {status === 'canceled' && error?.startsWith('Canceled')
            ? error
            : // A failed message's reason, and Retry, are under it (FailedFix).
              `${STATUS_LABEL[status] ?? status}${error && undeliveredState(m) !== 'failed' ? `: ${error}` : ''}`}
        </span>
      ) : null}
      {m.message_id > 0 ? <FlagToggle m={m} /> : null}
    </span>
  );
}

/**
 * A scheduled message (docs/api.md#send-later): when it goes, in the conversation's time zone,
 * whether the client's reply cancels it, and Cancel / Edit (reschedule) while it is still scheduled.
 */
function ScheduledActions({ m, sendAt }: { m: MessageItem; sendAt: string }) {
  const utils = trpc.useUtils();
  const zone = trpc.inbox.sendLaterTimezone.useQuery({ conversationId: m.conversation_id }, { staleTime: 5 * 60_000 });
  const timezone = zone.data?.timezone ?? 'UTC';
  const [editing, setEditing] = useState(false);
  const refresh = { onSettled: () => void utils.inbox.messages.invalidate({ conversationId: m.conversation_id }) };
  const cancel = trpc.inbox.cancelScheduled.useMutation(refresh);
  const sendNow = trpc.inbox.sendScheduledNow.useMutation({ ...refresh, onSuccess: () => setConfirming(false) });
  const [confirming, setConfirming] = useState(false);
  const error = describeError(cancel.error ?? sendNow.error);
  // docs/api.md#quiet-hours: a text held for the client's quiet hours says so, in the client's time.
  const held = m.hold_reason === 'quiet_hours' && m.quiet_hours !== null;
  return (
    <span className={styles.scheduled} data-testid="message-status">
      {held
        ? `Held for quiet hours: goes ${formatInZone(m.quiet_hours!.time_zone, sendAt)} client's time (${m.quiet_hours!.time_zone})`
        : `Scheduled for ${formatInZone(timezone, sendAt)}`}
      {m.cancel_on_reply ? ' · canceled if the client replies first' : ''}{' '}
      {confirming ? (
        <span role="group" aria-label="Confirm send now">
          {held ? "Send now, in the client's quiet hours?" : 'Send now?'}{' '}
          <button
            type="button"
            className={`${styles.button} ${styles.primary}`}
            disabled={sendNow.isPending}
            onClick={() => sendNow.mutate({ messageId: m.message_id })}
          >
            Yes, send now
          </button>{' '}
          <button type="button" className={`${styles.button} ${styles.ghost}`} onClick={() => setConfirming(false)}>
            Keep waiting
          </button>{' '}
        </span>
      ) : (
        <>
          <button type="button" className={`${styles.button} ${styles.ghost}`} onClick={() => setConfirming(true)}>
            Send now
          </button>{' '}
        </>
      )}
      <button
        type="button"
        className={`${styles.button} ${styles.ghost}`}
        disabled={cancel.isPending}
        onClick={() => cancel.mutate({ messageId: m.message_id })}
      >
        Cancel
      </button>{' '}
      <button
        type="button"
        className={`${styles.button} ${styles.ghost}`}
        aria-expanded={editing}
        disabled={!zone.data}
        onClick={() => setEditing((e) => !e)}
      >
        Edit
      </button>
      {editing ? <EditScheduled m={m} sendAt={sendAt} timezone={timezone} onDone={() => setEditing(false)} /> : null}
      {error ? <span className={styles.failed}> {error}</span> : null}
    </span>
  );
}

function FlagToggle({ m }: { m: MessageItem }) {
  const utils = trpc.useUtils();
  const flag = trpc.inbox.flag.useMutation({
    onSettled: () => {
      void utils.inbox.messages.invalidate({ conversationId: m.conversation_id });
      void utils.inbox.conversation.invalidate({ conversationId: m.conversation_id });
    },
  });
  const flagged = flag.isPending ? flag.variables.flagged : m.flagged;
  return (
    <button
      type="button"
      className={styles.flag}
      aria-pressed={flagged}
      aria-label={flagged ? 'Unflag message' : 'Flag message'}
      onClick={() => flag.mutate({ messageId: m.message_id, flagged: !flagged })}
    >
      ⚑
    </button>
  );
}

function CallEntry({ m }: { m: MessageItem }) {
  const status = m.message_status as string;
  const inbound = m.direction === 'inbound';
  const voicemail = m.call_outcome === 'voicemail';
  const missed = m.call_outcome === 'missed' || voicemail;
  const label = voicemail ? 'Voicemail' : missed ? 'Missed call' : inbound ? 'Incoming call' : 'Outgoing call';
  return (
    <div className={styles.call} data-testid="call-entry">
      <span aria-hidden>📞</span>
      <strong className={missed && !voicemail ? styles.failed : undefined}>{label}</strong>
      {m.call_duration_seconds ? (
        <span data-testid="call-duration">{duration(m.call_duration_seconds)}</span>
      ) : (
        <span className={styles.meta}>{STATUS_LABEL[status] ?? status}</span>
      )}
      {m.staff_name ? <span className={styles.meta}>{m.staff_name}</span> : null}
      {m.recording_url ? (
        <audio controls preload="none" src={m.recording_url} aria-label={`${label} recording`} style={{ height: 32 }} />
      ) : null}
    </div>
  );
}

function EmailCard({ m, highlight }: { m: MessageItem; highlight: string }) {
  return (
    <article className={styles.card} aria-label={`Email: ${m.subject ?? '(no subject)'}`}>
      <div className={styles.cardHead}>
        <strong>
          <Highlighted text={m.subject ?? '(no subject)'} term={highlight} />
        </strong>
        <span>
          {m.direction === 'inbound' ? 'From' : 'To'} {m.direction === 'inbound' ? m.from_address : m.to_address}
        </span>
        {m.cc_email?.length ? <span>Cc {m.cc_email.join(', ')}</span> : null}
      </div>
      {m.message_id > 0 ? (
        <EmailFrame messageId={m.message_id} fallback={<Highlighted text={m.content ?? ''} term={highlight} />} />
      ) : (
        <div className={styles.emailText}>{m.content}</div>
      )}
      {m.attachments?.length ? (
        <div className={styles.attachments} aria-label="Attachments">
          {m.attachments.map((a, i) =>
            a.url && /^https?:/i.test(a.url) ? (
              <a key={i} className={styles.chip} href={a.url} target="_blank" rel="noopener noreferrer nofollow">
                📎 {a.filename}
              </a>
            ) : (
              <span key={i} className={styles.chip}>
                📎 {a.filename}
              </span>
            ),
          )}
        </div>
      ) : null}
    </article>
  );
}

/** One timeline entry: SMS bubble, email card, call entry or internal note. */
export function MessageView({ message: m, highlight, targeted }: { message: MessageItem; highlight: string; targeted: boolean }) {
  const side = m.message_type === 'NOTE' ? styles.note : m.direction === 'inbound' ? styles.msgIn : styles.msgOut;
  const state = stateClasses(m);
  const cls = `${styles.msg} ${side} ${targeted ? styles.targeted : ''} ${state.wrapper}`;
  return (
    <div
      id={`message-${m.message_id}`}
      className={cls}
      data-message-id={m.message_id}
      data-message-type={m.message_type}
      data-state={undeliveredState(m) ?? undefined}
    >
      {m.message_type === 'CALL' ? (
        <CallEntry m={m} />
      ) : m.message_type === 'EMAIL' ? (
        <EmailCard m={m} highlight={highlight} />
      ) : (
        <div className={`${styles.bubble} ${state.bubble}`}>
          {m.message_type === 'NOTE' ? (
            <span className={styles.meta} style={{ display: 'block' }}>
              Internal note · {m.staff_name ?? 'API'}
            </span>
          ) : null}
          <Highlighted text={m.content ?? ''} term={highlight} />
          {m.channel === 'sms' ? <MmsMedia m={m} /> : null}
          {m.notification_type === 'appointment_confirmation' || m.notification_type === 'appointment_reminder' ? (
            <ReminderFor m={m} />
          ) : null}
        </div>
      )}
      {m.appointment_reply ? (
        // How the client's reply to an appointment reminder was read (docs/api.md#replies-to-reminders).
        <span className={styles.meta} data-testid="appointment-reply">
          {APPOINTMENT_REPLY_WORDS[m.appointment_reply.intent]}
        </span>
      ) : null}
      <StatusLine m={m} />
      <FailedFix m={m} />
    </div>
  );
}
