'use client';
import { useState } from 'react';
import { trpc } from '@/components/trpc/client';
import { MAX_SMS_LENGTH } from '@/server/shared/limits';
import { ERROR_STATUSES, isStatusIn } from '@/server/shared/message-statuses';
import { staffErrorText } from '@/server/shared/provider-errors';
import { fromLocalInput } from '@/server/shared/zoned-time';
import { describeError } from './format';
import inbox from './inbox.module.css';
import { retryOffer, textCount, toLocalInput } from './plain-words';
import styles from './texts.module.css';
import type { MessageItem } from './types';

/**
 * Fixing a text from the timeline (docs/api.md#retry, docs/api.md#send-later): a failed message
 * says why in plain words and offers Retry, saying what it does; a scheduled one is edited with its
 * words and time filled in. Failed and canceled messages look unlike sent ones (texts.module.css).
 */

/** A message that did not go out, as the timeline marks it: `failed` (an error status) or `canceled`. */
export function undeliveredState(m: MessageItem): 'failed' | 'canceled' | null {
  if (m.direction !== 'outbound' || m.message_type === 'NOTE' || m.message_type === 'CALL') return null;
  if (isStatusIn(ERROR_STATUSES, m.message_status)) return 'failed';
  return m.message_status === 'canceled' ? 'canceled' : null;
}

/** The class names a message's wrapper and bubble take for its state (texts.module.css). */
export function stateClasses(m: MessageItem): { wrapper: string; bubble: string } {
  const state = undeliveredState(m);
  return state ? { wrapper: `${styles.msg} ${styles[state]}`, bubble: styles.bubble! } : { wrapper: '', bubble: '' };
}

/** Under a failed message: why, in plain words; and Retry, with what it will do, where it can help. */
export function FailedFix({ m }: { m: MessageItem }) {
  const utils = trpc.useUtils();
  const retry = trpc.inbox.retryMessage.useMutation({
    onSettled: () => {
      void utils.inbox.messages.invalidate({ conversationId: m.conversation_id });
      void utils.inbox.list.invalidate();
    },
  });
  if (undeliveredState(m) !== 'failed') return null;
  const why = staffErrorText(m.error_code, m.error_message);
  const offer = retryOffer(m);
  return (
    <div className={styles.fix} data-testid="failed-fix">
      <p className={styles.why}>
        <strong>Not delivered.</strong> {why ?? 'The provider gave no reason.'}
      </p>
      {offer.canRetry ? (
        <div className={styles.fixActions}>
          <button
            type="button"
            className={`${inbox.button} ${inbox.primary}`}
            disabled={retry.isPending || retry.isSuccess}
            aria-describedby={`retry-what-${m.message_id}`}
            onClick={() => retry.mutate({ messageId: m.message_id })}
          >
            {retry.isPending ? 'Retrying…' : 'Retry'}
          </button>
          <span id={`retry-what-${m.message_id}`}>{offer.what}</span>
        </div>
      ) : null}
      {retry.error ? (
        <p role="alert" className={styles.fixError}>
          {describeError(retry.error)}
        </p>
      ) : null}
    </div>
  );
}

/**
 * Edit of a scheduled message: its words (a text's; an email keeps its own) and its time, both
 * filled in with what is stored, the time on the conversation's clock. Saves only what changed.
 */
export function EditScheduled({
  m,
  sendAt,
  timezone,
  onDone,
}: {
  m: MessageItem;
  sendAt: string;
  timezone: string;
  onDone: () => void;
}) {
  const utils = trpc.useUtils();
  const [words, setWords] = useState(m.content ?? '');
  const [when, setWhen] = useState(() => toLocalInput(timezone, new Date(sendAt)));
  const edit = trpc.inbox.editScheduled.useMutation({
    onSuccess: onDone,
    onSettled: () => {
      void utils.inbox.messages.invalidate({ conversationId: m.conversation_id });
      void utils.inbox.list.invalidate();
    },
  });
  const isText = m.message_type === 'TEXT';
  const newTime = fromLocalInput(timezone, when);
  const wordsChanged = isText && words.trim() !== (m.content ?? '').trim();
  const timeChanged = newTime !== null && newTime.getTime() !== new Date(sendAt).getTime();
  const count = isText ? textCount(words) : null;
  const error = describeError(edit.error, { send_at: 'New send time', message: 'Text' });
  return (
    <form
      className={styles.edit}
      aria-label="Edit scheduled message"
      onSubmit={(e) => {
        e.preventDefault();
        if (!wordsChanged && !timeChanged) return onDone();
        edit.mutate({
          messageId: m.message_id,
          ...(wordsChanged ? { message: words } : {}),
          ...(timeChanged ? { send_at: newTime.toISOString() } : {}),
        });
      }}
    >
      {isText ? (
        <>
          <label>
            Text
            <textarea
              className={inbox.textarea}
              value={words}
              maxLength={MAX_SMS_LENGTH}
              onChange={(e) => setWords(e.target.value)}
            />
          </label>
          {count?.words ? (
            <span className={styles.count} title={count.detail || undefined}>
              {count.words}
            </span>
          ) : null}
        </>
      ) : null}
      <label>
        New send time ({timezone})
        <input type="datetime-local" className={inbox.input} value={when} onChange={(e) => setWhen(e.target.value)} />
      </label>
      <div className={styles.fixActions}>
        <button
          type="submit"
          className={`${inbox.button} ${inbox.primary}`}
          disabled={!newTime || (isText && !words.trim()) || edit.isPending}
        >
          {edit.isPending ? 'Saving…' : 'Save changes'}
        </button>
        <button type="button" className={`${inbox.button} ${inbox.ghost}`} onClick={onDone}>
          Keep as it was
        </button>
      </div>
      {error ? (
        <p role="alert" className={styles.fixError} style={{ margin: 0 }}>
          {error}
        </p>
      ) : null}
    </form>
  );
}
