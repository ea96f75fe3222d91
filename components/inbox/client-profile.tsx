'use client';
import { useState } from 'react';
import { trpc } from '@/components/trpc/client';
import styles from './edit-inline.module.css';
import { describeError } from './format';

/** The API's bounds (UpdateClientRequest): the fields stop there rather than answer a 422. */
const MAX_NAME = 200;
const MAX_EMAIL = 254;

/**
 * The client's name in the client panel, with its editor: a lead that arrived as a bare number gets
 * a name, a client a new email address (inbox.updateClient, the rules of PATCH /clients/{client_id};
 * a change is a `client.updated` event). A blank field clears the value.
 */
export function ClientProfile({ clientId, name, email }: { clientId: number; name: string | null; email: string | null }) {
  const [draft, setDraft] = useState<{ name: string; email: string } | null>(null);
  const utils = trpc.useUtils();
  const update = trpc.inbox.updateClient.useMutation({
    onSuccess: () => setDraft(null),
    onSettled: () => void utils.inbox.invalidate(),
  });
  const close = () => {
    setDraft(null);
    update.reset();
  };
  const error = describeError(update.error, { name: 'Name', email: 'Email' });

  if (!draft)
    return (
      <div className={styles.nameRow}>
        <h2>{name ?? 'Unknown client'}</h2>
        <button type="button" className={styles.small} onClick={() => setDraft({ name: name ?? '', email: email ?? '' })}>
          {name ? 'Edit name' : 'Add name'}
        </button>
      </div>
    );
  return (
    <form
      className={styles.profile}
      aria-label="Client name and email"
      // The server's rules and words (a 422 names the field), not the browser's own email check.
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        // Only what changed: a blank field clears it.
        const next = { name: draft.name.trim() || null, email: draft.email.trim() || null };
        const change = {
          ...(next.name !== name ? { name: next.name } : {}),
          ...(next.email !== email ? { email: next.email } : {}),
        };
        if (Object.keys(change).length === 0) close();
        else update.mutate({ clientId, ...change });
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.preventDefault();
          e.stopPropagation();
          close();
        }
      }}
    >
      <label>
        Name
        <input
          className={styles.field}
          autoFocus
          maxLength={MAX_NAME}
          autoComplete="off"
          value={draft.name}
          onChange={(e) => setDraft({ ...draft, name: e.target.value })}
        />
      </label>
      <label>
        Email
        <input
          className={styles.field}
          type="email"
          maxLength={MAX_EMAIL}
          autoComplete="off"
          value={draft.email}
          onChange={(e) => setDraft({ ...draft, email: e.target.value })}
        />
      </label>
      {error ? (
        <p role="alert" className={styles.error}>
          {error}
        </p>
      ) : null}
      <div className={styles.actions}>
        <button type="submit" className={styles.primary} disabled={update.isPending}>
          Save
        </button>
        <button type="button" className={styles.small} onClick={close}>
          Cancel
        </button>
      </div>
    </form>
  );
}
