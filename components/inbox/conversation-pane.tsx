'use client';
import { useEffect, useEffectEvent, useState, type RefObject } from 'react';
import { CallButton } from '@/components/voice/call-button';
import { trpc } from '@/components/trpc/client';
import { Composer } from './composer';
import { ConversationHeader } from './conversation-header';
import { PossibleOptOutBanner } from './possible-opt-out-banner';
import styles from './inbox.module.css';
import { Timeline } from './timeline';
import type { Me } from './types';

/** One conversation: header with its controls, the timeline (with in-conversation search), the composer. */
export function ConversationPane({
  conversationId,
  me,
  jumpTo,
  composerRef,
  onBack,
}: {
  conversationId: number;
  me: Me;
  jumpTo: { messageId: number; term: string } | null;
  composerRef: RefObject<HTMLTextAreaElement | null>;
  onBack: () => void;
}) {
  const details = trpc.inbox.conversation.useQuery({ conversationId });
  const [searchTerm, setSearchTerm] = useState(jumpTo?.term ?? '');
  // A new object per jump, so jumping to the same message again scrolls to it again.
  const [target, setTarget] = useState<{ messageId: number } | null>(jumpTo ? { messageId: jumpTo.messageId } : null);
  // A search hit opened while this conversation is already open: the pane is not remounted, so
  // take the new jump here (React's "adjust state when a prop changes" pattern).
  const [jumpSeen, setJumpSeen] = useState(jumpTo);
  if (jumpTo !== jumpSeen) {
    setJumpSeen(jumpTo);
    if (jumpTo) {
      setSearchTerm(jumpTo.term);
      setTarget({ messageId: jumpTo.messageId });
    }
  }
  const utils = trpc.useUtils();
  const markRead = trpc.inbox.markRead.useMutation({
    onSuccess: () => {
      void utils.inbox.list.invalidate();
      void utils.inbox.filters.invalidate();
      void utils.inbox.conversation.invalidate({ conversationId });
    },
  });

  // Opening a conversation reads it; so does a new inbound message arriving while it is open.
  // Only a change in the count reads again: the mutation's own state changes (pending, then done
  // before the count refetches) must not, so it is read in an Effect Event.
  const unread = details.data?.unread_messages_count ?? 0;
  const markAllRead = useEffectEvent((id: number) => {
    if (!markRead.isPending) markRead.mutate({ conversationId: id, isRead: true });
  });
  useEffect(() => {
    if (unread > 0) markAllRead(conversationId);
  }, [unread, conversationId]);

  // docs/api.md#mentions: opening a conversation sees my mentions in it, and so does a note that
  // mentions me arriving while it is open (its latest message moves).
  const seeMentions = trpc.inbox.seeMentions.useMutation({
    onSuccess: ({ seen, notificationsRead }) => {
      // Its notifications were read too: the bell's count drops.
      if (notificationsRead > 0) void utils.inbox.notifications.invalidate();
      if (seen === 0) return;
      void utils.inbox.list.invalidate();
      void utils.inbox.filters.invalidate();
    },
  });
  const latest = details.data?.last_message_id ?? null;
  const see = useEffectEvent((id: number) => seeMentions.mutate({ conversationId: id }));
  useEffect(() => {
    see(conversationId);
  }, [latest, conversationId]);

  if (details.isPending)
    return (
      <p role="status" className={styles.state}>
        Loading conversation…
      </p>
    );
  if (details.error) {
    return (
      <p role="alert" className={`${styles.state} ${styles.error}`}>
        {details.error.data?.code === 'NOT_FOUND'
          ? 'This conversation does not exist in your business.'
          : 'Could not load the conversation.'}{' '}
        <button type="button" className={styles.button} onClick={onBack}>
          Back
        </button>
      </p>
    );
  }
  const c = details.data;
  return (
    <>
      <ConversationHeader
        conversation={c}
        me={me}
        onBack={onBack}
        searchTerm={searchTerm}
        onSearchTerm={setSearchTerm}
        onJump={(messageId) => setTarget({ messageId })}
        callButton={
          <CallButton
            clientId={c.client_id}
            clientName={c.client_name ?? undefined}
            phoneNumber={c.client_phone_number ?? undefined}
          />
        }
      />
      <PossibleOptOutBanner conversation={c} />
      <Timeline conversationId={conversationId} highlight={searchTerm} target={target} />
      <Composer conversation={c} composerRef={composerRef} />
    </>
  );
}
