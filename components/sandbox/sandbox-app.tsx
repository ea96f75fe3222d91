'use client';
import { keepPreviousData } from '@tanstack/react-query';
import { useState } from 'react';
import { SearchField } from '@/components/shared/search-field';
import { useDebounced } from '@/components/shared/use-debounced';
import { trpc } from '@/components/trpc/client';
import { clientLabel, errorText, shortTime, type SandboxClient } from './format';
import { Mailbox } from './mailbox';
import { Phone } from './phone';
import styles from './sandbox.module.css';

const PAGE_SIZE = 50;

type Tab = 'phone' | 'mailbox';
/** The selected client's views, in tab order. */
const TABS: { value: Tab; label: string }[] = [
  { value: 'phone', label: 'Phone' },
  { value: 'mailbox', label: 'Mailbox' },
];

/**
 * The sandbox (development only): pick one of the business's clients, see their phone (the SMS
 * thread as the client sees it) or mailbox, and reply as them. Replies are posted as signed
 * provider webhooks to the real endpoints, so they show up in the inbox live.
 */
export function SandboxApp() {
  const me = trpc.session.me.useQuery();
  const [search, setSearch] = useState('');
  const term = useDebounced(search.trim(), 250);
  const [page, setPage] = useState(1);
  const [selected, setSelected] = useState<SandboxClient | null>(null);
  const [tab, setTab] = useState<Tab>('phone');

  // A new search term starts on its first page (adjusting state while rendering, not in an effect).
  const [pageTerm, setPageTerm] = useState(term);
  if (pageTerm !== term) {
    setPageTerm(term);
    setPage(1);
  }
  const list = trpc.sandbox.clients.useQuery(
    { search: term || undefined, page, pageSize: PAGE_SIZE },
    { placeholderData: keepPreviousData, refetchInterval: 10_000, staleTime: 2_000 },
  );
  // Keep the selected client's row fresh (opt-out flags, last message) while it is on the page.
  const current = (selected && list.data?.clients.find((c) => c.clientId === selected.clientId)) ?? selected;

  return (
    <div className={styles.app} data-pane={current ? 'detail' : 'list'}>
      <header className={styles.top}>
        <h1>Sandbox</h1>
        <span className={styles.badge}>Development</span>
        <span className={styles.hint}>
          Reply as a client: the reply is posted as a signed provider webhook and arrives in the inbox.
        </span>
        <span className={styles.topLinks}>
          {me.data ? (
            <span className={styles.muted} data-testid="sandbox-business">
              {me.data.businessName} · {me.data.staffName}
            </span>
          ) : null}
          <a href="/inbox" target="_blank" rel="noopener">
            Open inbox
          </a>
        </span>
      </header>

      <nav className={styles.list} aria-label="Clients">
        <div className={styles.listSearch}>
          <SearchField label="Search clients" placeholder="Search name, phone or email" value={search} onValue={setSearch} />
        </div>
        <ClientList
          query={list}
          selectedId={current?.clientId ?? null}
          onSelect={(c) => setSelected(c)}
          searching={term !== ''}
        />
        {list.data && (list.data.total > PAGE_SIZE || page > 1) ? (
          <div className={styles.pager}>
            <button
              type="button"
              className={styles.button}
              onClick={() => setPage((p) => Math.max(1, p - 1))}
              disabled={page === 1}
            >
              Previous
            </button>
            <span>
              {(page - 1) * PAGE_SIZE + 1}–{Math.min(page * PAGE_SIZE, list.data.total)} of {list.data.total}
            </span>
            <button type="button" className={styles.button} onClick={() => setPage((p) => p + 1)} disabled={!list.data.nextPage}>
              Next
            </button>
          </div>
        ) : null}
      </nav>

      <main className={styles.detail}>
        {current ? (
          <>
            <div className={styles.detailHead}>
              <button
                type="button"
                className={`${styles.button} ${styles.backButton}`}
                onClick={() => setSelected(null)}
                aria-label="Back to clients"
              >
                ←
              </button>
              <h2 data-testid="sandbox-client-name">{clientLabel(current)}</h2>
              <span className={`${styles.muted} ${styles.small}`}>
                {[current.phone, current.email].filter(Boolean).join(' · ')}
              </span>
              <div className={styles.tabs} role="tablist" aria-label="Client views">
                {TABS.map(({ value, label }) => (
                  <button
                    key={value}
                    type="button"
                    role="tab"
                    className={styles.tab}
                    aria-selected={tab === value}
                    aria-controls="sandbox-panel"
                    onClick={() => setTab(value)}
                  >
                    {label}
                  </button>
                ))}
              </div>
            </div>
            <div
              className={styles.detailBody}
              id="sandbox-panel"
              role="tabpanel"
              aria-label={TABS.find((t) => t.value === tab)?.label}
            >
              {tab === 'phone' ? (
                <Phone key={current.clientId} client={current} />
              ) : (
                <Mailbox key={current.clientId} client={current} />
              )}
            </div>
          </>
        ) : (
          <p className={styles.state}>Pick a client to see their phone and mailbox.</p>
        )}
      </main>
    </div>
  );
}

type ClientsQuery = {
  data: { clients: SandboxClient[] } | undefined;
  isPending: boolean;
  error: { message: string; data?: { code?: string } | null } | null;
  refetch: () => unknown;
};

function ClientList({
  query,
  selectedId,
  onSelect,
  searching,
}: {
  query: ClientsQuery;
  selectedId: number | null;
  onSelect: (c: SandboxClient) => void;
  searching: boolean;
}) {
  if (query.isPending)
    return (
      <p className={styles.state} role="status">
        Loading clients…
      </p>
    );
  if (query.error && !query.data) {
    return (
      <div className={styles.error} role="alert">
        {query.error.data?.code === 'NOT_FOUND'
          ? 'The sandbox is not available here.'
          : `Could not load clients: ${errorText(query.error)}`}
        <button type="button" className={styles.button} onClick={() => query.refetch()}>
          Retry
        </button>
      </div>
    );
  }
  const clients = query.data?.clients ?? [];
  if (clients.length === 0) {
    return <p className={styles.state}>{searching ? 'No client matches that search.' : 'This business has no clients yet.'}</p>;
  }
  return (
    <ul className={styles.clientList}>
      {clients.map((c) => (
        <li key={c.clientId}>
          <button
            type="button"
            className={styles.clientItem}
            aria-pressed={c.clientId === selectedId}
            onClick={() => onSelect(c)}
          >
            <span className={styles.clientName}>{clientLabel(c)}</span>
            <span className={styles.clientWhen}>{shortTime(c.lastActivityAt)}</span>
            <span className={styles.clientMeta}>
              {[c.phone, c.email].filter(Boolean).join(' · ') || 'No phone or email'}
              {c.optedOutSms ? ' · SMS opted out' : ''}
            </span>
            {c.lastMessage ? <span className={styles.clientLast}>{c.lastMessage}</span> : null}
          </button>
        </li>
      ))}
    </ul>
  );
}
