'use client';
import { useCallback, useMemo, useRef, useState, useSyncExternalStore, type RefObject } from 'react';
import { trpc } from '@/components/trpc/client';
import { IncomingCallToast } from '@/components/voice/incoming-call-toast';
import { NewMessageDialog } from './new-message';
import { ClientPanel } from './client-panel';
import { ConversationList } from './conversation-list';
import { ConversationPane } from './conversation-pane';
import { useBell, useReadWhileOpen } from './bell';
import { useDesktopAlerts } from './desktop-alerts';
import styles from './inbox.module.css';
import phone from './phone.module.css';
import { PhoneTabs, type PhonePane } from './phone-tabs';
import { SearchResults } from './search-results';
import { ShortcutsDialog } from './shortcuts-dialog';
import { Sidebar } from './sidebar';
import { TopBar } from './top-bar';
import { tabTitle } from './notification-rules';
import { listInput, type ConversationRow, type View } from './types';
import { useInboxKeyboard } from './use-inbox-keyboard';
import { useLiveInbox } from './use-live-inbox';

/**
 * The staff inbox: views sidebar, conversation list, the open conversation, the client panel.
 * State that a link should carry (the open conversation) lives in the URL (`?c=`); the rest is
 * local. Data comes only through tRPC; live events invalidate what they touch.
 */
export function InboxApp() {
  return (
    <>
      <UnreadTitle />
      <Inbox />
    </>
  );
}

function Inbox() {
  const me = trpc.session.me.useQuery();
  const [view, setView] = useState<View>({ status: 'open', assignment: 'all' });
  // The open conversation: until one is opened here, the one the URL names (a shared link or a reload).
  // The server render has no URL (null); hydration then re-renders with the URL's.
  const urlConversation = useSyncExternalStore(subscribeNothing, conversationInUrl, () => null);
  const [opened, setOpened] = useState<number | null | undefined>(undefined); // undefined: none opened yet
  const selectedId = opened === undefined ? urlConversation : opened;
  const [jumpTo, setJumpTo] = useState<{ messageId: number; term: string } | null>(null);
  const [searchTerm, setSearchTerm] = useState<string | null>(null);
  const [composing, setComposing] = useState(false);
  const [showShortcuts, setShowShortcuts] = useState(false);
  // On a phone one part shows at a time (phone.module.css); until a tab is chosen, the one opened last.
  const [pane, setPane] = useState<PhonePane | null>(null);
  const shownPane: PhonePane = pane === 'views' || pane === 'list' ? pane : selectedId ? (pane ?? 'conversation') : 'list';
  const rowsRef = useRef<ConversationRow[]>([]);
  const searchInputRef = useRef<HTMLInputElement>(null);
  const composerRef = useRef<HTMLTextAreaElement>(null);

  const open = useCallback((id: number | null, at?: { messageId: number; term: string }) => {
    setOpened(id);
    setJumpTo(at ?? null);
    setPane(id ? 'conversation' : 'list');
    const url = new URL(window.location.href);
    if (id) url.searchParams.set('c', String(id));
    else url.searchParams.delete('c');
    window.history.replaceState(null, '', url);
  }, []);

  const changeView = useCallback((next: View) => {
    setView(next);
    setSearchTerm(null);
    setPane('list');
  }, []);

  // A conversation the bell or a desktop notification leads to.
  const openNotified = useCallback(
    (id: number) => {
      setSearchTerm(null);
      open(id);
    },
    [open],
  );
  const desktopAlert = useDesktopAlerts(selectedId, openNotified);
  const readWhileOpen = useReadWhileOpen(selectedId);
  const onNotification = useCallback<NonNullable<Parameters<typeof useLiveInbox>[1]>>(
    (n) => {
      desktopAlert(n);
      readWhileOpen(n);
    },
    [desktopAlert, readWhileOpen],
  );
  const { signedOut, superseded, reconnect, newActivity } = useLiveInbox(selectedId, onNotification);

  const utils = trpc.useUtils();
  const setStatus = trpc.inbox.setStatus.useMutation({ onSettled: () => utils.inbox.invalidate() });
  const assign = trpc.inbox.assign.useMutation({ onSettled: () => utils.inbox.invalidate() });

  const move = useCallback(
    (delta: number) => {
      const rows = rowsRef.current;
      if (!rows.length) return;
      const at = rows.findIndex((r) => r.conversation_id === selectedId);
      const next = rows[Math.min(rows.length - 1, Math.max(0, at === -1 ? 0 : at + delta))];
      if (next) open(next.conversation_id);
    },
    [open, selectedId],
  );

  useInboxKeyboard({
    next: () => move(1),
    previous: () => move(-1),
    resolve: () => selectedId && setStatus.mutate({ conversationId: selectedId, status: 'resolved' }),
    assignToMe: () => selectedId && me.data && assign.mutate({ conversationId: selectedId, staffId: me.data.staffId }),
    focusSearch: () => searchInputRef.current?.focus(),
    focusComposer: () => composerRef.current?.focus(),
    newMessage: () => setComposing(true),
    help: () => setShowShortcuts(true),
    back: () => {
      if (searchTerm !== null) setSearchTerm(null);
      else open(null);
    },
  });

  const input = useMemo(() => listInput(view), [view]);

  /** A conversation New message or the top bar's search landed in: the composer has the focus. */
  const started = (conversationId: number) => {
    setComposing(false);
    setSearchTerm(null);
    focusNextComposer(composerRef, conversationId === selectedId);
    open(conversationId);
  };

  if (me.isPending)
    return (
      <p role="status" className={styles.state}>
        Loading your inbox…
      </p>
    );
  if (signedOut) {
    return (
      <p role="alert" className={`${styles.state} ${styles.error}`}>
        Signed out: this session has ended. <a href="/login">Sign in again</a>
      </p>
    );
  }
  if (me.error) {
    return (
      <p role="alert" className={`${styles.state} ${styles.error}`}>
        {me.error.data?.code === 'UNAUTHORIZED' ? 'Your session has ended. ' : 'Could not load your profile. '}
        <a href="/login">Sign in again</a>
      </p>
    );
  }

  return (
    <div className={`${styles.app} ${phone.app}`} data-pane={shownPane}>
      <TopBar
        me={me.data}
        searchInputRef={searchInputRef}
        onSearch={(term) => {
          setSearchTerm(term);
          setPane('list');
        }}
        onOpen={(conversationId, at) => {
          setSearchTerm(null);
          open(conversationId, at);
        }}
        onStarted={started}
        onNewMessage={() => setComposing(true)}
        onOpenConversation={openNotified}
      />
      {composing ? <NewMessageDialog onClose={() => setComposing(false)} onOpen={started} /> : null}
      {showShortcuts ? <ShortcutsDialog onClose={() => setShowShortcuts(false)} /> : null}
      <nav className={`${styles.side} ${phone.side}`} aria-label="Views">
        <Sidebar view={view} onChange={changeView} />
      </nav>
      <section className={`${styles.list} ${phone.list}`} aria-label={searchTerm !== null ? 'Search results' : 'Conversations'}>
        {searchTerm !== null ? (
          <SearchResults
            term={searchTerm}
            onOpen={(conversationId, messageId) => open(conversationId, { messageId, term: searchTerm })}
            onClose={() => setSearchTerm(null)}
          />
        ) : (
          <ConversationList input={input} selectedId={selectedId} onOpen={open} rowsRef={rowsRef} newActivity={newActivity} />
        )}
      </section>
      <main className={`${styles.main} ${phone.main}`}>
        {selectedId ? (
          <ConversationPane
            key={selectedId}
            conversationId={selectedId}
            me={me.data}
            jumpTo={jumpTo}
            composerRef={composerRef}
            onBack={() => open(null)}
          />
        ) : (
          <p className={styles.state}>
            Select a conversation. Use j / k to move, / to search.{' '}
            <button type="button" className={styles.button} onClick={() => setShowShortcuts(true)} aria-keyshortcuts="?">
              Keyboard shortcuts
            </button>
          </p>
        )}
      </main>
      <aside className={`${styles.client} ${phone.client}`} aria-label="Client details">
        {selectedId ? <ClientPanel conversationId={selectedId} /> : null}
      </aside>
      <PhoneTabs pane={shownPane} conversationOpen={selectedId !== null} onPane={setPane} />
      <IncomingCallToast />
      {superseded ? (
        // Live updates stopped here (a newer tab of this session holds the stream); the rest works.
        <p role="alert" className={styles.liveBanner}>
          Opened in another tab —{' '}
          <button type="button" onClick={reconnect}>
            Reconnect
          </button>
        </p>
      ) : null}
    </div>
  );
}

/**
 * Focuses the composer of a conversation just opened: the pane remounts and renders a new composer
 * once the conversation has loaded, so this waits (a few seconds at most) for an element other
 * than the previous conversation's. `reopened`: the conversation was already open (same composer).
 */
function focusNextComposer(ref: RefObject<HTMLTextAreaElement | null>, reopened: boolean) {
  const previous = reopened ? null : ref.current;
  const until = performance.now() + 5_000;
  const attempt = () => {
    const el = ref.current;
    if (el && el !== previous) {
      if (!el.disabled) el.focus();
    } else if (performance.now() < until) requestAnimationFrame(attempt);
  };
  requestAnimationFrame(attempt);
}

/** The conversation the URL's `?c=` names, if any. */
function conversationInUrl(): number | null {
  const c = Number(new URLSearchParams(window.location.search).get('c'));
  return Number.isInteger(c) && c > 0 ? c : null;
}

function subscribeNothing() {
  return () => {};
}

/**
 * The tab title, with the bell's unread count (notification-rules.ts). Rendered, not set from an
 * effect: the inbox's page has no title of Next.js's metadata (app/layout.tsx), so this element is
 * the only one and React alone writes it. A title written from an effect was overwritten, now and
 * then, by React committing the metadata's own <title> after it, and stayed without its count.
 */
function UnreadTitle() {
  const unread = useBell().data?.unread ?? 0;
  return <title>{tabTitle(unread)}</title>;
}
