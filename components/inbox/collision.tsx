'use client';
import { useState } from 'react';
import { trpc } from '@/components/trpc/client';
import styles from './inbox.module.css';
import own from './collision.module.css';

/** The ids a 409 of the collision guard lists (docs/api.md#collision-guard), or null for any other error. */
export function collisionIds(error: { data?: unknown } | null | undefined): number[] | null {
  const fields = (error?.data as { fields?: { new_message_ids?: unknown } | null } | undefined)?.fields;
  const ids = fields?.new_message_ids;
  return Array.isArray(ids) && ids.length > 0 ? (ids as number[]) : null;
}

/**
 * The composer's collision guard (docs/api.md#collision-guard). A send carries the newest message
 * the timeline shows (what the sender has seen: the timeline follows live events); when a client
 * message or a colleague's reply arrived after it, the server holds the send (409) and the notice
 * offers Send anyway, which passes the newest of the new messages as seen. The new messages reach
 * the timeline at once (it is read again), so the sender reads them before deciding.
 */
export function useCollisionGuard(conversationId: number) {
  const utils = trpc.useUtils();
  const [held, setHeld] = useState<{ ids: number[]; detail: string } | null>(null);

  /** The newest message id the timeline shows: 0 when it shows none, undefined before it has loaded. */
  function lastSeen(): number | undefined {
    const data = utils.inbox.messages.getInfiniteData({ conversationId, pageSize: 50 });
    if (!data) return undefined;
    // Optimistic messages not stored yet have negative ids.
    return Math.max(0, ...data.pages.flatMap((p) => p.messages.map((m) => m.message_id)));
  }

  return {
    held,
    /** What a send passes: Send anyway's newest new message, else what the timeline shows. */
    guard: (anyway: boolean) => ({ last_seen_message_id: anyway && held ? Math.max(...held.ids) : lastSeen() }),
    /** A send failed: true when the guard held it (the notice shows instead of the error). */
    onError(error: { message: string; data?: unknown }): boolean {
      const ids = collisionIds(error);
      if (!ids) return false;
      setHeld({ ids, detail: error.message });
      void utils.inbox.messages.invalidate({ conversationId });
      return true;
    },
    clear: () => setHeld(null),
  };
}

/** The held send's notice: what arrived, and Send anyway or keep editing. */
export function CollisionNotice({
  guard,
  onSendAnyway,
  busy,
}: {
  guard: ReturnType<typeof useCollisionGuard>;
  onSendAnyway: () => void;
  busy: boolean;
}) {
  if (!guard.held) return null;
  return (
    <div className={own.notice} role="alert" data-testid="collision-notice">
      <p className={own.text}>
        {guard.held.detail} {guard.held.ids.length === 1 ? 'It is' : 'They are'} in the conversation above; your message is still
        here.
      </p>
      <div className={own.actions}>
        <button type="button" className={`${styles.button} ${styles.primary}`} disabled={busy} onClick={onSendAnyway}>
          Send anyway
        </button>
        <button type="button" className={`${styles.button} ${styles.ghost}`} onClick={guard.clear}>
          Keep editing
        </button>
      </div>
    </div>
  );
}
