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
