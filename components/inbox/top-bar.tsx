'use client';
import type { ComponentProps, RefObject } from 'react';
import { trpc } from '@/components/trpc/client';
import { WEBHOOK_MANAGER_ROLES } from '@/server/shared/outgoing-webhooks';
import { AvailabilityBar } from './availability';
import { Bell } from './bell';
import { GlobalSearch } from './global-search';
import styles from './inbox.module.css';
import type { Me } from './types';

/**
 * Business name, New message (`n`), the search for clients and messages (`/`, global-search.tsx), the
 * settings pages' menu (Webhooks only for the roles that may use it), the bell (bell.tsx), the Away
 * switch and the team's states (availability.tsx), who is signed in, sign out.
 */
export function TopBar({
  me,
  searchInputRef,
  onSearch,
  onOpen,
  onStarted,
  onNewMessage,
  onOpenConversation,
}: {
  me: Me;
  searchInputRef: RefObject<HTMLInputElement | null>;
  /** Every message result for a term, in the list column. */
  onSearch: (term: string) => void;
  onOpen: ComponentProps<typeof GlobalSearch>['onOpen'];
  onStarted: (conversationId: number) => void;
  onNewMessage: () => void;
  /** A conversation the bell leads to. */
  onOpenConversation: (conversationId: number) => void;
}) {
  const signOut = trpc.session.signOut.useMutation({ onSuccess: () => window.location.assign('/login') });
  return (
    <header className={styles.top}>
      <h1>{me.businessName}</h1>
      <button type="button" className={`${styles.button} ${styles.primary}`} onClick={onNewMessage} aria-keyshortcuts="n">
        New message
      </button>
      <form role="search" className={styles.topSearch} onSubmit={(e) => e.preventDefault()}>
        <GlobalSearch inputRef={searchInputRef} onOpen={onOpen} onStarted={onStarted} onAllMessages={onSearch} />
      </form>
      {/* One menu rather than a link per page: the bar keeps its room on a phone as pages are added. */}
      <details className={styles.settingsMenu}>
        <summary>Settings</summary>
        <nav aria-label="Settings">
          <a href="/reports">Reports</a>
          <a href="/settings/saved-replies">Saved replies</a>
          <a href="/settings/opening-hours">Opening hours</a>
          <a href="/settings/after-hours">After-hours answer</a>
          <a href="/settings/assignment">Auto-assignment</a>
          <a href="/settings/quiet-hours">Quiet hours</a>
          <a href="/settings/staff-schedules">Staff schedules</a>
          <a href="/settings/notifications">Notifications</a>
          {(WEBHOOK_MANAGER_ROLES as readonly string[]).includes(me.role) ? <a href="/settings/webhooks">Webhooks</a> : null}
        </nav>
      </details>
      <Bell onOpen={onOpenConversation} />
      <AvailabilityBar me={me} />
      <span className={styles.me} data-testid="signed-in-as">
        Signed in as {me.staffName}
      </span>
      <button
        type="button"
        className={`${styles.button} ${styles.ghost}`}
        onClick={() => signOut.mutate()}
        disabled={signOut.isPending}
      >
        Sign out
      </button>
    </header>
  );
}
