'use client';
import { Fragment, useEffect, useLayoutEffect, useRef } from 'react';
import { trpc } from '@/components/trpc/client';
import { activitySince, interleave } from './activity';
import { ActivityLine, useActivityLines } from './activity-line';
import { dayLabel, uniqueBy } from './format';
import styles from './inbox.module.css';
import { MessageView } from './message-view';
import { useRovingTimeline } from './use-roving-timeline';

const PAGE_SIZE = 50;

/**
 * The conversation's messages, oldest at the top like every chat, with date separators. Pages of
 * 50 come newest-first from the server; scrolling to the top loads earlier ones. A search hit
 * (`target`) is loaded page by page if needed, scrolled into view and outlined.
 */
export function Timeline({
  conversationId,
  highlight,
  target,
}: {
  conversationId: number;
  highlight: string;
  target: { messageId: number } | null;
}) {
  const query = trpc.inbox.messages.useInfiniteQuery(
    { conversationId, pageSize: PAGE_SIZE },
    { getNextPageParam: (last) => (last.next_page ? last.page + 1 : undefined) },
  );
  const scrollRef = useRef<HTMLDivElement>(null);
  const stickToBottom = useRef(true);
  // Newest first across pages (a page fetched after new messages arrived can repeat some: keep the first).
  const messages = uniqueBy(query.data?.pages.flatMap((p) => p.messages) ?? [], (m) => m.message_id).reverse();
  const newestId = messages.at(-1)?.message_id;
  // Who did what, between the messages, as far back as the messages loaded go.
  const lines = useActivityLines(conversationId, activitySince(messages[0]?.sent_at, query.hasNextPage), query.isSuccess);
  const items = interleave(messages, lines);
  const targetId = target?.messageId ?? null;
  const targetLoaded = targetId !== null && messages.some((m) => m.message_id === targetId);
  /** The jump last scrolled to: each jump scrolls once, not again on every later render or refetch. */
  const scrolledFor = useRef<{ messageId: number } | null>(null);
  const roving = useRovingTimeline(scrollRef);

  // Stay at the newest message as messages arrive, unless the reader scrolled up.
  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (el && stickToBottom.current && target === null) el.scrollTop = el.scrollHeight;
  }, [newestId, items.length, target]);

  // A search hit further back: load earlier pages until it is here, then show it (once per jump, so
  // live refetches and re-renders do not pull the reader back to it after they scrolled away).
  useEffect(() => {
    if (target === null || scrolledFor.current === target) return;
    if (!targetLoaded) {
      if (query.hasNextPage && !query.isFetchingNextPage) void query.fetchNextPage();
      return;
    }
    scrolledFor.current = target;
    document.getElementById(`message-${target.messageId}`)?.scrollIntoView({ block: 'center' });
  }, [target, targetLoaded, query]);

  function onScroll() {
    const el = scrollRef.current;
    if (!el) return;
    stickToBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
    if (el.scrollTop < 80 && query.hasNextPage && !query.isFetchingNextPage) {
      // Keep the reader's place while earlier messages are prepended.
      const before = el.scrollHeight;
      void query.fetchNextPage().then(() => requestAnimationFrame(() => (el.scrollTop += el.scrollHeight - before)));
    }
  }

  if (query.isPending)
    return (
      <div className={styles.timeline}>
        <p role="status" className={styles.state}>
          Loading messages…
        </p>
      </div>
    );
  if (query.error) {
    return (
      <div className={styles.timeline}>
        <p role="alert" className={`${styles.state} ${styles.error}`}>
          Could not load messages.{' '}
          <button type="button" className={styles.button} onClick={() => void query.refetch()}>
            Retry
          </button>
        </p>
      </div>
    );
  }

  // A day's first message or line gets a separator.
  const days = items.map((i) => dayLabel(i.at));
  return (
    <div
      ref={scrollRef}
      className={styles.timeline}
      onScroll={onScroll}
      role="log"
      aria-label="Messages"
      aria-live="polite"
      onKeyDown={roving.onKeyDown}
      onFocus={roving.onFocus}
    >
      {query.hasNextPage ? (
        <button
          type="button"
          className={styles.button}
          style={{ alignSelf: 'center' }}
          onClick={() => void query.fetchNextPage()}
          disabled={query.isFetchingNextPage}
        >
          {query.isFetchingNextPage ? 'Loading…' : 'Load earlier messages'}
        </button>
      ) : null}
      {messages.length === 0 ? <p className={styles.state}>No messages yet. Say hello below.</p> : null}
      {items.map((it, i) => {
        const day = days[i]!;
        const separator = day !== (i > 0 ? days[i - 1] : '');
        return (
          <Fragment key={it.kind === 'message' ? it.item.message_id : `a${it.item.activity_id}`}>
            {separator ? (
              <div className={styles.separator} role="separator">
                {day}
              </div>
            ) : null}
            {it.kind === 'message' ? (
              <MessageView message={it.item} highlight={highlight} targeted={it.item.message_id === targetId} />
            ) : (
              <ActivityLine line={it.item} />
            )}
          </Fragment>
        );
      })}
    </div>
  );
}
