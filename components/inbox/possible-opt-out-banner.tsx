'use client';
import { useId } from 'react';
import { trpc } from '@/components/trpc/client';
import styles from './opt-out.module.css';
import type { ConversationDetails } from './types';

/**
 * The conversation's pending possible opt-out (docs/api.md#possible-opt-outs): a text that reads like
 * a request to stop texts without being STOP. Staff decide in one click; the banner goes when the
 * conversation's details no longer name a pending text (here, or by live event when someone else
 * decided or the client texted STOP or START).
 */
export function PossibleOptOutBanner({ conversation: c }: { conversation: ConversationDetails }) {
  const messageId = c.possible_opt_out_message_id;
  const conversationId = c.conversation_id!;
  const titleId = useId();
  const text = trpc.inbox.possibleOptOut.useQuery({ conversationId, messageId: messageId ?? 0 }, { enabled: messageId !== null });
  const utils = trpc.useUtils();
  const decide = trpc.inbox.decidePossibleOptOut.useMutation({
    // Whatever happened (decided here, or already decided elsewhere: CONFLICT), show what is now true.
    onSettled: () => utils.inbox.invalidate(),
  });
  if (messageId === null) return null;
  const conflict = decide.error?.data?.code === 'CONFLICT';
  return (
    <section className={styles.banner} role="region" aria-labelledby={titleId} data-testid="possible-opt-out">
      <h3 id={titleId}>Possible opt-out</h3>
      <p>
        {c.client_name ?? 'The client'} wrote:
        <q className={styles.quote}>{text.data?.content ?? (text.isPending ? '…' : 'this message')}</q>
      </p>
      <p>This may be a request to stop texts. US rules require honouring it within 10 business days.</p>
      <div className={styles.actions}>
        <button
          type="button"
          className={styles.primary}
          disabled={decide.isPending}
          onClick={() => decide.mutate({ conversationId, decision: 'confirm', messageId })}
        >
          Opt out of texts
        </button>
        <button
          type="button"
          className={styles.button}
          disabled={decide.isPending}
          onClick={() => decide.mutate({ conversationId, decision: 'dismiss', messageId })}
        >
          Keep subscribed
        </button>
      </div>
      {decide.error && !conflict ? (
        <p role="alert" className={styles.error}>
          Could not save the decision. Try again.
        </p>
      ) : null}
    </section>
  );
}
