'use client';
import { trpc } from '@/components/trpc/client';
import { describeActivity, type ActivityLine as Line } from '@/server/shared/activity';
import { clockTime } from './format';
import styles from './activity.module.css';

/** While the worker has not yet written a line for a change the inbox heard of, read again this soon. */
const BEHIND_POLL_MS = 500;

const when = (iso: string) =>
  new Date(iso).toLocaleString('en-US', { weekday: 'short', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' });

/**
 * The open conversation's activity lines from `since` on (docs/architecture.md#event-log). They are
 * written by the worker a moment after the change: a live event of the conversation refetches them
 * (use-live-inbox.ts), and while the server says some are still to come (`behind`) they are read
 * again every BEHIND_POLL_MS until they are there. `enabled`: once the messages are loaded, which
 * decide `since`.
 */
export function useActivityLines(conversationId: number, since: string | null, enabled: boolean): Line[] {
  const query = trpc.inbox.activity.useQuery(
    { conversationId, since },
    {
      enabled,
      placeholderData: (previous) => previous,
      refetchInterval: (q) => (q.state.data?.behind ? BEHIND_POLL_MS : false),
    },
  );
  return (query.data?.lines ?? []).slice().reverse();
}

/** One compact line: who (bold), what they did, the reason or note they gave, and when. */
export function ActivityLine({ line }: { line: Line }) {
  const { who, what, note } = describeActivity(line, when);
  return (
    <div className={styles.line} data-testid="activity-line" data-type={line.type}>
      <strong>{who}</strong> {what}
      {note ? (
        <>
          {': '}
          <q className={styles.note} title={note}>
            {note}
          </q>
        </>
      ) : null}{' '}
      <time className={styles.time} dateTime={line.occurred_at} title={new Date(line.occurred_at).toLocaleString()}>
        {clockTime(line.occurred_at)}
      </time>
    </div>
  );
}
