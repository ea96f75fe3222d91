'use client';
import { useId, useState } from 'react';
import { trpc } from '@/components/trpc/client';
import styles from './edit-inline.module.css';
import { describeError } from './format';

/** The API's bound on a label (LabelRequest): the field stops there rather than answer a 422. */
const MAX_LABEL = 50;

/**
 * A conversation's label where it is shown (the conversation header and the client panel): add,
 * change or remove it, under the REST rules (inbox.label takes LabelRequest: 1 to 50 characters once
 * trimmed, null removes it); each change is a `conversation.labeled` event. The business's labels in
 * use are offered as suggestions, so one label is not typed three ways.
 */
export function LabelEditor({ conversationId, label }: { conversationId: number; label: string | null }) {
  const [draft, setDraft] = useState<string | null>(null); // null: not editing
  const utils = trpc.useUtils();
  const filters = trpc.inbox.filters.useQuery(undefined, { enabled: draft !== null });
  const set = trpc.inbox.label.useMutation({
    onSuccess: () => setDraft(null),
    onSettled: () => void utils.inbox.invalidate(),
  });
  const listId = useId();
  const error = describeError(set.error, { label: 'Label' });
  const editing = draft !== null;

  return (
    <span className={styles.label} role="group" aria-label="Label">
      {editing ? (
        <form
          className={styles.form}
          onSubmit={(e) => {
            e.preventDefault();
            if (draft.trim()) set.mutate({ conversationId, label: draft.trim() });
          }}
          onKeyDown={(e) => {
            if (e.key === 'Escape') {
              // Leaves the editor, not the conversation (the inbox's Esc goes back).
              e.preventDefault();
              e.stopPropagation();
              setDraft(null);
              set.reset();
            }
          }}
        >
          <input
            className={styles.field}
            aria-label="Label name"
            placeholder="e.g. Color"
            autoFocus
            maxLength={MAX_LABEL}
            list={listId}
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            size={14}
          />
          <datalist id={listId}>
            {filters.data?.labels.map((l) => (
              <option key={l.value} value={l.value} />
            ))}
          </datalist>
          <button type="submit" className={styles.primary} disabled={set.isPending || !draft.trim()}>
            Save label
          </button>
          <button
            type="button"
            className={styles.small}
            onClick={() => {
              setDraft(null);
              set.reset();
            }}
          >
            Cancel
          </button>
        </form>
      ) : label ? (
        <>
          <span className={styles.labelChip} title={label} data-testid="conversation-label">
            {label}
          </span>
          <button type="button" className={styles.small} onClick={() => setDraft(label)} aria-label={`Change label ${label}`}>
            Change
          </button>
          <button
            type="button"
            className={styles.small}
            disabled={set.isPending}
            onClick={() => set.mutate({ conversationId, label: null })}
            aria-label={`Remove label ${label}`}
          >
            Remove
          </button>
        </>
      ) : (
        <button type="button" className={styles.small} onClick={() => setDraft('')}>
          Add label
        </button>
      )}
      {error ? (
        <span role="alert" className={styles.error}>
          {error}
        </span>
      ) : null}
    </span>
  );
}
