'use client';
import { useEffect, useRef, useSyncExternalStore } from 'react';
import superjson from 'superjson';
import { trpc } from '@/components/trpc/client';
import { type ConversationPresence, type PresenceBeatState, type PresenceFrame } from '@/server/shared/presence';
import { initials } from './format';
import { beatToSend } from './presence-beats';
import styles from './presence.module.css';
import { presenceTitle, typingLine } from './presence-words';
import { useStaffNames } from './staff-names';

/**
 * Colleagues on a conversation (docs/api.md#live-events): what the live stream's `presence` frames
 * say (use-live-inbox.ts hands them to applyPresence), shown as small avatars on the conversation's
 * row and in its header with "Ana is replying…"; and this tab's own beats (usePresenceBeat, from the
 * composer). The server leaves the staff member themselves out of every frame.
 */

type Staff = ConversationPresence['staff'];
const NOBODY: Staff = [];
let present = new Map<number, Staff>();
const listeners = new Set<() => void>();

/** A `presence` frame from the live stream: a snapshot replaces what was known, a change updates its conversations. */
export function applyPresence(frame: PresenceFrame) {
  const next = frame.snapshot ? new Map<number, Staff>() : new Map(present);
  for (const c of frame.conversations) {
    if (c.staff.length) next.set(c.conversationId, c.staff);
    else next.delete(c.conversationId);
  }
  present = next;
  for (const l of listeners) l();
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

/** The colleagues on a conversation, as the stream last said. */
export function usePresence(conversationId: number): Staff {
  return useSyncExternalStore(
    subscribe,
    () => present.get(conversationId) ?? NOBODY,
    () => NOBODY,
  );
}

/** How many avatars a row shows before "+n". */
const ROW_AVATARS = 3;

/** Colleagues' avatars: on a list row (`compact`), or in the header with who is typing. */
export function PresenceAvatars({ conversationId, compact = false }: { conversationId: number; compact?: boolean }) {
  const staff = usePresence(conversationId);
  const nameOf = useStaffNames();
  if (staff.length === 0) return null;
  const shown = compact ? staff.slice(0, ROW_AVATARS) : staff;
  const typing = compact ? '' : typingLine(staff, nameOf);
  const label = staff.map((s) => presenceTitle(nameOf(s.staffId), s.state)).join(', ');
  return (
    <span className={compact ? styles.row : styles.header} data-testid="presence">
      <span className={styles.avatars} role="img" aria-label={label} title={label}>
        {shown.map((s) => (
          <span key={s.staffId} className={`${styles.avatar} ${s.state === 'viewing' ? '' : styles.typingAvatar}`} aria-hidden>
            {initials(nameOf(s.staffId))}
          </span>
        ))}
        {staff.length > shown.length ? (
          <span className={styles.more} aria-hidden>
            +{staff.length - shown.length}
          </span>
        ) : null}
      </span>
      {compact ? null : (
        <span className={styles.typing} role="status" data-testid="presence-typing">
          {typing}
        </span>
      )}
    </span>
  );
}

/**
 * This tab's beats on the open conversation, as beatToSend decides them (presence-beats.ts), checked
 * every second and on each change of the draft or the tab's visibility; `left` when the conversation
 * closes or the page goes. A tab closed without a word expires on the server.
 */
export function usePresenceBeat(conversationId: number, kind: 'replying' | 'noting', draft: string) {
  const client = trpc.useUtils().client;
  const typedAt = useRef(0);
  const sent = useRef<{ state: PresenceBeatState | null; at: number }>({ state: null, at: 0 });
  const kindRef = useRef(kind);
  const draftRef = useRef(draft);

  // Everything the beat needs is in refs, so one loop per conversation reads the latest.
  const flush = useRef<() => void>(() => {});
  useEffect(() => {
    const beat = (state: PresenceBeatState) => {
      sent.current = { state, at: Date.now() };
      client.presence.beat.mutate({ conversationId, state }).catch(() => {
        // A beat lost is made up by the next one; the server's expiry covers the rest.
      });
    };
    flush.current = () => {
      const next = beatToSend({
        now: Date.now(),
        hidden: document.visibilityState === 'hidden',
        draft: draftRef.current,
        typedAt: typedAt.current,
        kind: kindRef.current,
        last: sent.current,
      });
      if (next) beat(next);
    };
    flush.current();
    const tick = setInterval(() => flush.current(), 1_000);
    const onVisibility = () => flush.current();
    document.addEventListener('visibilitychange', onVisibility);
    // The page going (a reload, a closed tab): fetch with keepalive outlives it.
    const onPageHide = () => {
      void fetch('/api/trpc/presence.beat', {
        method: 'POST',
        keepalive: true,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(superjson.serialize({ conversationId, state: 'left' })),
      }).catch(() => {});
    };
    window.addEventListener('pagehide', onPageHide);
    return () => {
      clearInterval(tick);
      document.removeEventListener('visibilitychange', onVisibility);
      window.removeEventListener('pagehide', onPageHide);
      if (sent.current.state !== null && sent.current.state !== 'left') beat('left');
      sent.current = { state: null, at: 0 };
    };
  }, [client, conversationId]);

  useEffect(() => {
    kindRef.current = kind;
    if (draft !== draftRef.current) typedAt.current = draft === '' ? 0 : Date.now();
    draftRef.current = draft;
    flush.current();
  }, [draft, kind]);
}
