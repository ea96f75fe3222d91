'use client';
import { trpc } from '@/components/trpc/client';
import { relativeTime, uniqueBy } from './format';
import styles from './inbox.module.css';
import { Highlighted } from './message-view';

/** Business-wide message search (notes included): each result opens its conversation at the message. */
export function SearchResults({
  term,
  onOpen,
  onClose,
}: {
  term: string;
  onOpen: (conversationId: number, messageId: number) => void;
  onClose: () => void;
}) {
  const valid = term.length >= 3;
  const results = trpc.inbox.search.useInfiniteQuery(
    { term, pageSize: 25 },
    { enabled: valid, getNextPageParam: (last) => (last.next_page ? last.page + 1 : undefined), initialCursor: 1 },
  );
  const items = uniqueBy(results.data?.pages.flatMap((p) => p.messages) ?? [], (m) => m.message_id);
  // Totals are counted up to 1,000 matches (server/services/search.ts): past that, "1000+".
  const first = results.data?.pages[0];
  const total = first ? `${first.total_messages}${first.total_capped ? '+' : ''}` : undefined;
  return (
    <>
      <div className={styles.listHead}>
        <span aria-live="polite" data-testid="search-summary">
          {!valid
            ? 'Type at least 3 characters'
            : results.isPending
              ? 'Searching…'
              : results.error
                ? 'Search failed'
                : `${total} result${total === '1' ? '' : 's'} for “${term}”`}
        </span>
        <button type="button" className={`${styles.button} ${styles.ghost}`} onClick={onClose} aria-label="Close search">
          ✕
        </button>
      </div>
      <div className={styles.scroller} style={{ contain: 'none' }}>
        {results.error ? (
          <p role="alert" className={`${styles.state} ${styles.error}`}>
            {results.error.message}
          </p>
        ) : null}
        {valid && results.data && items.length === 0 ? <p className={styles.state}>No messages match.</p> : null}
        <ul aria-label="Search results" style={{ listStyle: 'none', margin: 0, padding: 0 }}>
          {items.map((m) => (
            <li key={m.message_id}>
              <button type="button" className={styles.result} onClick={() => onOpen(m.conversation_id, m.message_id)}>
                <span className={styles.resultHead}>
                  <span>
                    {m.client_name ?? 'Unknown'}
                    {m.message_type === 'NOTE' ? ' · note' : ''}
                  </span>
                  <span className={styles.count}>{relativeTime(m.sent_at)}</span>
                </span>
                <span className={styles.resultText}>
                  <MatchedText subject={m.subject} content={m.content} term={term} />
                </span>
              </button>
            </li>
          ))}
        </ul>
        {results.hasNextPage ? (
          <button
            type="button"
            className={styles.button}
            style={{ margin: 12 }}
            onClick={() => void results.fetchNextPage()}
            disabled={results.isFetchingNextPage}
          >
            More results
          </button>
        ) : null}
      </div>
    </>
  );
}

/** A found message's subject (emails) and text, with the term marked. The top bar's list shows it too. */
export function MatchedText({ subject, content, term }: { subject: string | null; content: string | null; term: string }) {
  return (
    <>
      {subject ? (
        <>
          <Highlighted text={subject} term={term} /> —{' '}
        </>
      ) : null}
      <Highlighted text={content ?? ''} term={term} />
    </>
  );
}
