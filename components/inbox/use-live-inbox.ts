'use client';
import { useEffect, useRef } from 'react';
import { trpc } from '@/components/trpc/client';
import { STREAM_SUPERSEDED } from '@/server/shared/live-events';

/**
 * Live inbox: the business's events (SSE, fed by PostgreSQL LISTEN/NOTIFY) invalidate the queries
 * they touch. Bursts (a bulk send, a storm of status callbacks) are folded into one refetch per
 * 200 ms, so a busy business never floods the browser.
 */
export function useLiveInbox(openConversationId: number | null) {
  const utils = trpc.useUtils();
  const pending = useRef<{ timer: ReturnType<typeof setTimeout> | null; conversations: Set<number> }>({
    timer: null,
    conversations: new Set(),
  });
  // Read by the burst timer, after commit.
  const openRef = useRef(openConversationId);
  useEffect(() => {
    openRef.current = openConversationId;
  }, [openConversationId]);
  // A burst pending when the inbox unmounts is dropped, not refetched after it is gone.
  useEffect(() => {
    const p = pending.current;
    return () => {
      if (p.timer) clearTimeout(p.timer);
      p.timer = null;
      p.conversations.clear();
    };
  }, []);

  const events = trpc.inbox.events.useSubscription(undefined, {
    onData(event) {
      const p = pending.current;
      for (const id of event.conversationIds) p.conversations.add(id);
      if (p.timer) return;
      p.timer = setTimeout(() => {
        const touched = p.conversations;
        p.conversations = new Set();
        p.timer = null;
        void utils.inbox.list.invalidate();
        void utils.inbox.filters.invalidate();
        const open = openRef.current;
        if (open && touched.has(open)) {
          void utils.inbox.conversation.invalidate({ conversationId: open });
          void utils.inbox.messages.invalidate({ conversationId: open });
        }
      }, 200);
    },
  });

  // The SSE link reconnects by itself after a dropped connection; whatever happened meanwhile was
  // never streamed, so everything shown is refetched once the stream is back.
  const connection = useRef<'never' | 'up' | 'lost'>('never');
  useEffect(() => {
    if (events.status === 'pending') {
      if (connection.current === 'lost') void utils.inbox.invalidate();
      connection.current = 'up';
    } else if (connection.current === 'up') {
      connection.current = 'lost';
    }
  }, [events.status, utils]);

  // The server ends the stream with UNAUTHORIZED once the session is revoked or expires (the
  // stream is not retried then): the inbox says so instead of showing stale data. It ends it with
  // STREAM_SUPERSEDED when this session opened one stream too many (another tab is newer): not
  // retried either, or the tabs would take it from each other; `reconnect` opens it again (and
  // refetches, as after any reconnect), on the staff member's word.
  const failed = events.status === 'error' ? events.error?.data?.code : undefined;
  return {
    signedOut: failed === 'UNAUTHORIZED',
    superseded: failed === STREAM_SUPERSEDED.code,
    reconnect: events.reset,
  };
}
