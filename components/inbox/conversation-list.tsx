'use client';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useLayoutEffect, useRef, useState, type RefObject } from 'react';
import { trpc } from '@/components/trpc/client';
import { ConversationPreview } from './conversation-preview';
import { initials, relativeTime, uniqueBy } from './format';
import { withKeptRows, type KeptRow } from './kept-rows';
import { NEEDS_ATTENTION_WORDS, NeedsAttentionChip } from './needs-attention-chip';
import { PresenceAvatars } from './presence';
import styles from './inbox.module.css';
import keptStyles from './views.module.css';
import type { ConversationRow, ListInput } from './types';

const ROW_HEIGHT = 64;

/**
 * The conversation list: infinite (pages of 50 fetched as the end nears) and virtualized (only the
 * rows on screen are in the DOM), so 10,000 conversations scroll like 10. A conversation opened
 * here stays in place when reading it takes it out of the view (kept-rows.ts) until the list is
 * refreshed: by its Refresh button, another view, or `newActivity` (a new message arrived).
 */
export function ConversationList({
  input,
  selectedId,
  onOpen,
  rowsRef,
  newActivity = 0,
}: {
  input: ListInput;
  selectedId: number | null;
  onOpen: (id: number) => void;
  rowsRef: RefObject<ConversationRow[]>;
  newActivity?: number;
}) {
  const query = trpc.inbox.list.useInfiniteQuery(input, {
    getNextPageParam: (last) => (last.next_page ? last.page + 1 : undefined),
    placeholderData: (previous) => previous,
  });
  const fresh = uniqueBy(query.data?.pages.flatMap((p) => p.conversations) ?? [], (r) => r.conversation_id);
  const me = trpc.session.me.useQuery(undefined, { staleTime: Infinity });

  // The rows opened in this view since it was last refreshed, at the place each was shown; let go
  // of when the view changes or something new arrived (React's "adjust state on a prop change").
  const viewKey = JSON.stringify(input);
  const [kept, setKept] = useState({ viewKey, newActivity, rows: new Map<number, KeptRow>() });
  const release = () => setKept({ viewKey, newActivity, rows: new Map() });
  const current = kept.viewKey === viewKey && kept.newActivity === newActivity ? kept.rows : new Map<number, KeptRow>();
  if (current !== kept.rows) release();
  const missing = [...current.keys()].filter((id) => !fresh.some((r) => r.conversation_id === id));
  // Their latest details (the open one's are loaded anyway): the read state shows, and one that left
  // the view for another reason (resolved, reassigned) leaves the list.
  const latest = trpc.useQueries((t) => missing.map((conversationId) => t.inbox.conversation({ conversationId })));
  const { rows, keptIds } = withKeptRows(
    fresh,
    current,
    (id) => latest[missing.indexOf(id)]?.data,
    input,
    me.data?.staffId ?? null,
  );
  const openedAt = rows.findIndex((r) => r.conversation_id === selectedId);
  const opened = openedAt >= 0 ? rows[openedAt]! : null;
  if (opened && selectedId !== null && !current.has(selectedId) && fresh.includes(opened))
    setKept({ viewKey, newActivity, rows: new Map(current).set(selectedId, { index: openedAt, row: opened }) });
  // The rows j/k move through (the inbox's keyboard handler), as each render commits.
  useLayoutEffect(() => {
    rowsRef.current = rows;
  });
  const total = query.data?.pages[0]?.total_conversations;

  const scrollRef = useRef<HTMLDivElement>(null);
  // eslint-disable-next-line react-hooks/incompatible-library -- TanStack Virtual has no memo-safe API; the compiler skipping this component is right, and no memoized code receives the virtualizer
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 8,
  });
  const items = virtualizer.getVirtualItems();
  const lastIndex = items.at(-1)?.index ?? -1;

  useEffect(() => {
    if (lastIndex >= rows.length - 15 && query.hasNextPage && !query.isFetchingNextPage) void query.fetchNextPage();
  }, [lastIndex, rows.length, query]);

  // Keep the selected row in view when j/k moves past the edge.
  const selectedIndex = rows.findIndex((r) => r.conversation_id === selectedId);
  useEffect(() => {
    if (selectedIndex >= 0) virtualizer.scrollToIndex(selectedIndex, { align: 'auto' });
  }, [selectedIndex, virtualizer]);

  return (
    <>
      <div className={styles.listHead}>
        <span aria-live="polite" data-testid="conversation-total">
          {total === undefined ? 'Loading…' : `${total} conversation${total === 1 ? '' : 's'}`}
        </span>
        {query.isFetching ? <span aria-hidden>…</span> : null}
        {keptIds.length > 0 ? (
          <button
            type="button"
            className={keptStyles.refresh}
            title="Read conversations stay in place until the list is refreshed"
            onClick={() => {
              release();
              void query.refetch();
            }}
          >
            Refresh
          </button>
        ) : null}
      </div>
      {query.error ? (
        <p role="alert" className={`${styles.state} ${styles.error}`}>
          Could not load conversations.{' '}
          <button type="button" className={styles.button} onClick={() => void query.refetch()}>
            Retry
          </button>
        </p>
      ) : query.isPending ? (
        <p role="status" className={styles.state}>
          Loading conversations…
        </p>
      ) : rows.length === 0 ? (
        <p className={styles.state}>No conversations here.</p>
      ) : null}
      <div ref={scrollRef} className={styles.scroller} data-conversation-list data-testid="conversation-scroller">
        <ul
          role="listbox"
          aria-label="Conversations"
          style={{ height: virtualizer.getTotalSize(), position: 'relative', margin: 0, padding: 0, listStyle: 'none' }}
        >
          {items.map((item) => {
            const row = rows[item.index]!;
            const unread = row.unread_messages_count > 0;
            return (
              <li
                key={row.conversation_id}
                role="option"
                aria-selected={row.conversation_id === selectedId}
                aria-label={`${row.client_name ?? 'Unknown'}${unread ? `, ${row.unread_messages_count} unread` : ''}${
                  row.needs_attention_reason ? `, needs attention: ${NEEDS_ATTENTION_WORDS[row.needs_attention_reason]}` : ''
                }`}
                tabIndex={row.conversation_id === selectedId || (selectedIndex < 0 && item.index === 0) ? 0 : -1}
                className={`${styles.row} ${unread ? styles.rowUnread : ''}`}
                style={{ top: item.start, height: ROW_HEIGHT }}
                onClick={() => onOpen(row.conversation_id!)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter' || e.key === ' ') {
                    e.preventDefault();
                    onOpen(row.conversation_id!);
                  }
                }}
                data-conversation-id={row.conversation_id}
                data-kept={keptIds.includes(row.conversation_id!) || undefined}
              >
                <span className={styles.avatar} aria-hidden>
                  {initials(row.client_name)}
                </span>
                <span className={styles.rowName}>
                  {row.client_name ?? row.client_phone_number ?? row.client_email ?? 'Unknown'}
                </span>
                <span className={styles.rowTime}>
                  <time dateTime={row.last_updated_at ?? undefined}>{relativeTime(row.last_updated_at)}</time>
                </span>
                <span className={styles.rowPreview}>
                  <ConversationPreview row={row} />
                </span>
                <span className={styles.rowMeta}>
                  <PresenceAvatars conversationId={row.conversation_id!} compact />
                  {row.needs_attention_reason ? <NeedsAttentionChip reason={row.needs_attention_reason} /> : null}
                  {row.assigned_to ? (
                    <span className={styles.assignee} title={`Assigned to ${row.assigned_to}`}>
                      {row.assigned_to}
                    </span>
                  ) : null}
                  {unread ? (
                    <span className={styles.badge} data-testid="unread-badge">
                      {row.unread_messages_count}
                    </span>
                  ) : null}
                </span>
              </li>
            );
          })}
        </ul>
      </div>
    </>
  );
}
