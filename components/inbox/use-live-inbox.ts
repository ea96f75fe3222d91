'use client';
import { useEffect, useRef, useState } from 'react';
import { trpc } from '@/components/trpc/client';
import { STREAM_SUPERSEDED } from '@/server/shared/live-events';
import type { NotificationFrame } from '@/server/shared/notifications';
import type { PresenceFrame } from '@/server/shared/presence';
import { applyPresence } from './presence';

/**
 * Live inbox: the business's events (SSE, fed from the event log) invalidate the queries they
 * touch. Bursts (a bulk send, a storm of status callbacks) are folded into one refetch per 200 ms,
 * so a busy business never floods the browser. Each event carries its id: a stream that drops is
 * opened again after the last one (tRPC's client sends it), and the server replays what was
 * missed, or sends `refetch` when it cannot (docs/api.md#live-events).
 */
export function useLiveInbox(
  openConversationId: number | null,
  onNotification?: (frame: NotificationFrame['notification']) => void,
) {
  const utils = trpc.useUtils();
  const pending = useRef<{ timer: ReturnType<typeof setTimeout> | null; conversations: Set<number>; newMessage: boolean }>({
    timer: null,
    conversations: new Set(),
    newMessage: false,
  });
  // Counts the bursts that brought a new message (or a full refetch): the list lets go of the rows
  // it kept after they were read (kept-rows.ts) when it changes.
  const [newActivity, setNewActivity] = useState(0);
  // Read by the burst timer, after commit.
  const openRef = useRef(openConversationId);
  useEffect(() => {
    openRef.current = openConversationId;
  }, [openConversationId]);
  const notifyRef = useRef(onNotification);
  useEffect(() => {
    notifyRef.current = onNotification;
  }, [onNotification]);
  // A burst pending when the inbox unmounts is dropped, not refetched after it is gone.
  useEffect(() => {
    const p = pending.current;
    return () => {
      if (p.timer) clearTimeout(p.timer);
      p.timer = null;
      p.conversations.clear();
    };
  }, []);

  // Whether this subscription received an event id to resume after, should it drop.
  const resumable = useRef(false);
  const events = trpc.inbox.events.useSubscription(undefined, {
    onData(value) {
      // A presence frame comes untracked (no id): tRPC's client hands it over as is until the stream
      // has had an event, and after that wrapped with the last event's id (the EventSource keeps it).
      const event = 'type' in value ? (value as unknown as PresenceFrame | NotificationFrame) : value.data;
      // Presence is not an event of the log: nothing to resume after, nothing to refetch.
      if (event.type === 'presence') {
        applyPresence(event);
        return;
      }
      // One of my notifications was written: the bell refetches; the browser may be told.
      if (event.type === 'notification') {
        void utils.inbox.notifications.invalidate();
        notifyRef.current?.(event.notification);
        return;
      }
      resumable.current = true;
      if (event.type === 'refetch') {
        setNewActivity((n) => n + 1);
        void utils.inbox.invalidate();
        return;
      }
      // A colleague went Away or came back: only the states shown change (the top bar, the picker).
      if (event.type === 'staff.updated') {
        void utils.inbox.availability.invalidate();
        return;
      }
      const p = pending.current;
      if (event.type === 'message.created') p.newMessage = true;
      for (const id of event.conversationIds) p.conversations.add(id);
      // A client's change (opt-out, consent) shows in the open conversation when it is theirs.
      const open = openRef.current;
      if (event.type === 'client.updated' && open) {
        const clientId = utils.inbox.conversation.getData({ conversationId: open })?.client_id;
        if (clientId !== undefined && event.clientIds.includes(clientId)) p.conversations.add(open);
      }
      if (p.timer) return;
      p.timer = setTimeout(() => {
        const touched = p.conversations;
        p.conversations = new Set();
        p.timer = null;
        if (p.newMessage) setNewActivity((n) => n + 1);
        p.newMessage = false;
        void utils.inbox.list.invalidate();
        void utils.inbox.filters.invalidate();
        const open = openRef.current;
        if (open && touched.has(open)) {
          void utils.inbox.conversation.invalidate({ conversationId: open });
          void utils.inbox.messages.invalidate({ conversationId: open });
          void utils.inbox.activity.invalidate({ conversationId: open });
          void utils.inbox.appointments.invalidate({ conversationId: open });
        }
      }, 200);
    },
  });

  // The SSE link reconnects by itself after a dropped connection, resuming after the last event it
  // received; a stream that dropped before its first event has nothing to resume after, so
  // everything shown is refetched once it is back.
  const connection = useRef<'never' | 'up' | 'lost'>('never');
  // Notification frames are not replayed: the bell is read again each time the stream is up, so one
  // written before it was (after the bell's first read, or while it was down) still counts.
  useEffect(() => {
    if (events.status === 'pending') {
      if (connection.current === 'lost' && !resumable.current) void utils.inbox.invalidate();
      else if (connection.current !== 'up') void utils.inbox.notifications.invalidate();
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
    newActivity,
    // A new subscription: no event to resume after, so it refetches once it is up.
    reconnect: () => {
      resumable.current = false;
      events.reset();
    },
  };
}
