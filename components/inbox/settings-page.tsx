import Link from 'next/link';
import type { ReactNode } from 'react';
import styles from './settings.module.css';

/** A settings page: its title and the way back to the inbox above, its sections side by side below. */
export function SettingsPage({ title, children }: { title: string; children: ReactNode }) {
  return (
    <div className={styles.page}>
      <header className={styles.top}>
        <h1>{title}</h1>
        <Link href="/inbox">Back to the inbox</Link>
      </header>
      <main className={styles.main}>{children}</main>
    </div>
  );
}

/** A settings form's error, announced when it appears. */
export function SettingsError({ error }: { error: string | null | undefined }) {
  return error ? (
    <p role="alert" className={styles.error}>
      {error}
    </p>
  ) : null;
}

/** A settings form's submit button (its own label for a new item, "Save changes" for an edit) and, while editing, Cancel. */
export function SaveButtons({
  newLabel,
  editing,
  saving,
  onCancel,
}: {
  newLabel: string;
  editing: boolean;
  saving: boolean;
  onCancel: () => void;
}) {
  return (
    <div className={styles.row}>
      <button type="submit" className={`${styles.button} ${styles.primary}`} disabled={saving}>
        {editing ? 'Save changes' : newLabel}
      </button>
      {editing ? (
        <button type="button" className={styles.button} onClick={onCancel}>
          Cancel
        </button>
      ) : null}
    </div>
  );
}
