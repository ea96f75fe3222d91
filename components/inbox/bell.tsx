'use client';
import { useCallback, useEffect, useEffectEvent, useId, useRef, useState } from 'react';
import { trpc } from '@/components/trpc/client';
import styles from './bell.module.css';
import { useDesktopPermission, useNotificationSound } from './desktop-alerts';
import { relativeTime } from './format';
import type { NotificationFrame } from '@/server/shared/notifications';
import { badgeText, bellLabel, notificationTarget, readOnArrival } from './notification-rules';

/**
 * The bell (docs/api.md#notifications), in the inbox's top bar: the signed-in staff member's unread
 * count, and a panel of their notifications, newest first. Clicking one reads it and opens its
 * conversation (an endpoint switched off: the webhooks page); "Mark all read". The count follows the
 * live stream (a `notification` frame refetches it, use-live-inbox.ts). The panel also holds the
 * desktop notifications' permission button and the sound's switch (desktop-alerts.ts).
 */

/** How many the panel lists: the newest; older ones are read from their conversations. */
const BELL_PAGE = 30;

/** The bell's list and unread count: one query for the bell and the tab title. */
export function useBell() {
  return trpc.inbox.notifications.useQuery({ limit: BELL_PAGE });
}

type BellData = NonNullable<ReturnType<typeof useBell>['data']>;

/**
 * The open conversation's notifications stay read while it is in view: one that arrives for it in a
 * visible tab is read at once (its message is on the screen), and coming back to the tab reads the
 * open conversation's (they arrived while it was hidden). Answers the live stream's handler.
 */
export function useReadWhileOpen(openConversationId: number | null) {
  const utils = trpc.useUtils();
  const refetch = () => void utils.inbox.notifications.invalidate();
  const markRead = trpc.inbox.markNotificationsRead.useMutation({ onSettled: refetch });
  const see = trpc.inbox.seeMentions.useMutation({ onSuccess: ({ notificationsRead }) => notificationsRead > 0 && refetch() });
  const seeOpen = useEffectEvent((conversationId: number) => see.mutate({ conversationId }));
  useEffect(() => {
    if (openConversationId === null) return;
    const back = () => {
      if (document.visibilityState === 'visible') seeOpen(openConversationId);
    };
    document.addEventListener('visibilitychange', back);
    return () => document.removeEventListener('visibilitychange', back);
  }, [openConversationId]);
  const { mutate } = markRead;
  return useCallback(
    (n: NotificationFrame['notification']) => {
      if (readOnArrival(n, { hidden: document.visibilityState === 'hidden', openConversationId })) mutate({ id: n.id });
    },
    [openConversationId, mutate],
  );
}

export function Bell({ onOpen }: { onOpen: (conversationId: number) => void }) {
  const bell = useBell();
  const utils = trpc.useUtils();
  const [open, setOpen] = useState(false);
  const panelId = useId();
  const rootRef = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const unread = bell.data?.unread ?? 0;

  // Read at once on screen; the server's answer (or a failure) brings the list back in line.
  const readLocally = (which: { id: number } | 'all') =>
    utils.inbox.notifications.setData({ limit: BELL_PAGE }, (old: BellData | undefined) => {
      if (!old) return old;
      const now = new Date();
      let read = 0;
      const items = old.items.map((n) => {
        if (n.readAt || (which !== 'all' && n.id !== which.id)) return n;
        read++;
        return { ...n, readAt: now };
      });
      return { items, unread: which === 'all' ? 0 : Math.max(0, old.unread - read) };
    });
  const markRead = trpc.inbox.markNotificationsRead.useMutation({
    onMutate: (input) => readLocally('all' in input ? 'all' : { id: input.id }),
    onSettled: () => void utils.inbox.notifications.invalidate(),
  });

  // The panel closes on a click elsewhere, and on Escape wherever the focus is (the focus back on
  // the bell): caught before the inbox's own Escape (use-inbox-keyboard.ts), which would close the
  // conversation.
  useEffect(() => {
    if (!open) return;
    const outside = (e: PointerEvent) => {
      if (!rootRef.current?.contains(e.target as Node)) setOpen(false);
    };
    const escape = (e: KeyboardEvent) => {
      if (e.key !== 'Escape' || e.defaultPrevented) return;
      e.preventDefault();
      setOpen(false);
      buttonRef.current?.focus();
    };
    document.addEventListener('pointerdown', outside);
    document.addEventListener('keydown', escape, true);
    return () => {
      document.removeEventListener('pointerdown', outside);
      document.removeEventListener('keydown', escape, true);
    };
  }, [open]);

  const choose = (n: BellData['items'][number]) => {
    if (!n.readAt) markRead.mutate({ id: n.id });
    setOpen(false);
    const target = notificationTarget(n);
    if (target && 'href' in target) window.location.assign(target.href);
    else if (target) onOpen(target.conversationId);
  };

  return (
    <div ref={rootRef} className={styles.bell}>
      <button
        ref={buttonRef}
        type="button"
        className={styles.button}
        aria-label={bellLabel(unread)}
        aria-expanded={open}
        aria-controls={panelId}
        onClick={() => setOpen((o) => !o)}
      >
        <BellIcon />
        {unread > 0 ? (
          <span className={styles.badge} aria-hidden="true" data-testid="bell-count">
            {badgeText(unread)}
          </span>
        ) : null}
      </button>
      <section id={panelId} className={styles.panel} aria-label="Notifications" hidden={!open}>
        <div className={styles.head}>
          <h2>Notifications</h2>
          {/* aria-disabled, not disabled: the focus stays on it once all are read. */}
          <button
            type="button"
            className={styles.link}
            aria-disabled={unread === 0}
            onClick={() => unread > 0 && markRead.mutate({ all: true })}
          >
            Mark all read
          </button>
        </div>
        {bell.isPending ? <p className={styles.none}>Loading…</p> : null}
        {bell.error ? (
          <p role="alert" className={styles.error}>
            Could not load your notifications.
          </p>
        ) : null}
        {markRead.error ? (
          <p role="alert" className={styles.error}>
            {markRead.error.message}
          </p>
        ) : null}
        {bell.data?.items.length === 0 ? <p className={styles.none}>Nothing yet.</p> : null}
        {bell.data?.items.length ? (
          <ul className={styles.items}>
            {bell.data.items.map((n) => (
              <li key={n.id}>
                <button
                  type="button"
                  className={`${styles.item} ${n.readAt ? '' : styles.unread}`}
                  onClick={() => choose(n)}
                  data-testid="bell-item"
                >
                  <span className={styles.title}>
                    {n.readAt ? null : <span className={styles.srOnly}>Unread: </span>}
                    {n.title}
                    {n.count > 1 ? <span className={styles.count}> ×{n.count}</span> : null}
                  </span>
                  <time className={styles.time} dateTime={n.updatedAt.toISOString()}>
                    {relativeTime(n.updatedAt.toISOString())}
                  </time>
                  {n.body ? <span className={styles.body}>{n.body}</span> : null}
                </button>
              </li>
            ))}
          </ul>
        ) : null}
        <DesktopChoices />
        <a href="/settings/notifications" className={styles.settings}>
          Notification settings
        </a>
      </section>
    </div>
  );
}

/** The desktop notifications' permission (asked only from this button) and the sound's switch. */
function DesktopChoices() {
  const [permission, ask] = useDesktopPermission();
  const [sound, setSound] = useNotificationSound();
  return (
    <div className={styles.desktop}>
      {permission === 'default' ? (
        <button type="button" className={styles.enable} onClick={() => void ask()}>
          Enable desktop notifications
        </button>
      ) : (
        <p className={styles.note} data-testid="desktop-permission">
          {permission === 'granted'
            ? 'Desktop notifications are on while this tab is in the background or another conversation is open.'
            : permission === 'denied'
              ? 'Desktop notifications are blocked for this site: allow them in the browser’s site settings.'
              : 'This browser cannot show desktop notifications.'}
        </p>
      )}
      <label className={styles.sound}>
        <input type="checkbox" checked={sound} onChange={(e) => setSound(e.target.checked)} /> Play a sound
      </label>
    </div>
  );
}

function BellIcon() {
  return (
    <svg width="18" height="18" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <path
        fill="none"
        stroke="currentColor"
        strokeWidth="2"
        strokeLinecap="round"
        strokeLinejoin="round"
        d="M6 8a6 6 0 1 1 12 0c0 7 3 9 3 9H3s3-2 3-9M10.3 21a1.94 1.94 0 0 0 3.4 0"
      />
    </svg>
  );
}
