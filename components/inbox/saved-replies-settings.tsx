'use client';
import { useState } from 'react';
import { trpc } from '@/components/trpc/client';
import {
  MAX_SAVED_REPLY_EMAIL_BODY,
  MAX_SAVED_REPLY_SMS_BODY,
  TEMPLATE_VARIABLE_HELP,
  TEMPLATE_VARIABLES,
  type SavedReplyChannel,
} from '@/server/shared/templates';
import { SaveButtons, SettingsError, SettingsPage } from './settings-page';
import { describeError } from './format';
import styles from './settings.module.css';

type Draft = { id: number | null; title: string; body: string; channel: SavedReplyChannel | null; subject: string };
const EMPTY: Draft = { id: null, title: '', body: '', channel: null, subject: '' };
const CHANNEL_LABEL = { any: 'Any channel', sms: 'SMS only', email: 'Email only' } as const;

/** The form's labels of the API's fields. */
const FIELD_LABELS = { title: 'Title', body: 'Text', channel: 'Channel', subject: 'Subject' };

/** The settings page of saved replies: the list, and a form that creates one or edits the one chosen. */
export function SavedRepliesSettings() {
  const utils = trpc.useUtils();
  const list = trpc.inbox.savedReplies.useQuery({});
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const done = {
    onSuccess: () => {
      setDraft(EMPTY);
      void utils.inbox.savedReplies.invalidate();
    },
  };
  const create = trpc.inbox.createSavedReply.useMutation(done);
  const update = trpc.inbox.updateSavedReply.useMutation(done);
  const remove = trpc.inbox.deleteSavedReply.useMutation({ onSuccess: () => void utils.inbox.savedReplies.invalidate() });
  const saving = create.isPending || update.isPending;
  const error = describeError(create.error ?? update.error ?? remove.error, FIELD_LABELS);
  const maxBody = draft.channel === 'email' ? MAX_SAVED_REPLY_EMAIL_BODY : MAX_SAVED_REPLY_SMS_BODY;

  function save() {
    const fields = {
      title: draft.title,
      body: draft.body,
      channel: draft.channel,
      subject: draft.channel === 'email' && draft.subject.trim() ? draft.subject : null,
    };
    if (draft.id === null) create.mutate(fields);
    else update.mutate({ savedReplyId: draft.id, ...fields });
  }

  return (
    <SettingsPage title="Saved replies">
      <section aria-label="Saved replies">
        <h2>Your saved replies</h2>
        {list.isPending ? <p role="status">Loading…</p> : null}
        {list.data?.saved_replies.length === 0 ? <p>None yet: write the first one.</p> : null}
        <ul className={styles.list}>
          {list.data?.saved_replies.map((r) => (
            <li key={r.saved_reply_id} className={styles.item} data-testid="saved-reply">
              <div className={styles.itemHead}>
                <strong>{r.title}</strong>
                <span>{CHANNEL_LABEL[r.channel ?? 'any']}</span>
                <button
                  type="button"
                  className={styles.button}
                  aria-label={`Edit ${r.title}`}
                  onClick={() =>
                    setDraft({
                      id: r.saved_reply_id,
                      title: r.title,
                      body: r.body,
                      channel: r.channel,
                      subject: r.subject ?? '',
                    })
                  }
                >
                  Edit
                </button>
                <button
                  type="button"
                  className={styles.button}
                  aria-label={`Delete ${r.title}`}
                  disabled={remove.isPending}
                  onClick={() => remove.mutate({ savedReplyId: r.saved_reply_id })}
                >
                  Delete
                </button>
              </div>
              {r.subject ? <p className={styles.body}>Subject: {r.subject}</p> : null}
              <p className={styles.body}>{r.body}</p>
            </li>
          ))}
        </ul>
      </section>
      <section aria-label={draft.id === null ? 'New saved reply' : 'Edit saved reply'}>
        <h2>{draft.id === null ? 'New saved reply' : `Edit “${draft.title}”`}</h2>
        <form
          className={styles.form}
          onSubmit={(e) => {
            e.preventDefault();
            save();
          }}
        >
          <label>
            Title
            <input
              className={styles.field}
              value={draft.title}
              maxLength={100}
              required
              onChange={(e) => setDraft({ ...draft, title: e.target.value })}
            />
          </label>
          <label>
            Channel
            <select
              className={styles.field}
              value={draft.channel ?? 'any'}
              onChange={(e) =>
                setDraft({ ...draft, channel: e.target.value === 'any' ? null : (e.target.value as SavedReplyChannel) })
              }
            >
              {Object.entries(CHANNEL_LABEL).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          {draft.channel === 'email' ? (
            <label>
              Subject
              <input
                className={styles.field}
                value={draft.subject}
                maxLength={998}
                onChange={(e) => setDraft({ ...draft, subject: e.target.value })}
              />
            </label>
          ) : null}
          <label>
            Text
            <textarea
              className={styles.textarea}
              value={draft.body}
              maxLength={maxBody}
              required
              onChange={(e) => setDraft({ ...draft, body: e.target.value })}
            />
          </label>
          <span>
            {draft.body.length}/{maxBody} characters. Variables:
          </span>
          <ul className={styles.variables}>
            {TEMPLATE_VARIABLES.map((v) => (
              <li key={v}>
                <code>{`{{${v}}}`}</code> {TEMPLATE_VARIABLE_HELP[v]}
              </li>
            ))}
          </ul>
          <SettingsError error={error} />
          <SaveButtons newLabel="Save reply" editing={draft.id !== null} saving={saving} onCancel={() => setDraft(EMPTY)} />
        </form>
      </section>
    </SettingsPage>
  );
}
