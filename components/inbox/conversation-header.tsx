'use client';
import { Fragment, useState, type ReactNode } from 'react';
import { SearchField } from '@/components/shared/search-field';
import { trpc } from '@/components/trpc/client';
import { groupByAvailability, useAvailability } from './availability';
import { splitMatches } from './format';
import styles from './inbox.module.css';
import { LabelEditor } from './label-editor';
import { PresenceAvatars } from './presence';
import { STAFF_STALE_MS } from './staff-names';
import type { ConversationDetails, Me } from './types';

/** Snooze choices a front desk uses: later today, tomorrow morning, next week. */
function snoozeUntil(choice: string, now = new Date()): Date {
  const d = new Date(now);
  if (choice === '1h') return new Date(now.getTime() + 3_600_000);
  if (choice === '3h') return new Date(now.getTime() + 3 * 3_600_000);
  d.setDate(d.getDate() + (choice === 'week' ? 7 : 1));
  d.setHours(9, 0, 0, 0);
  return d;
}

export function ConversationHeader({
  conversation: c,
  me,
  onBack,
  searchTerm,
  onSearchTerm,
  onJump,
  callButton,
}: {
  conversation: ConversationDetails;
  me: Me;
  onBack: () => void;
  searchTerm: string;
  onSearchTerm: (term: string) => void;
  onJump: (messageId: number) => void;
  callButton: ReactNode;
}) {
  const utils = trpc.useUtils();
  const staff = trpc.inbox.staff.useQuery(undefined, { staleTime: STAFF_STALE_MS });
  const availability = useAvailability();
  const refresh = { onSettled: () => void utils.inbox.invalidate() };
  const setStatus = trpc.inbox.setStatus.useMutation(refresh);
  const assign = trpc.inbox.assign.useMutation(refresh);
  const [searching, setSearching] = useState(searchTerm !== '');
  const id = c.conversation_id!;
  const resolved = c.status === 'resolved';
  const busy = setStatus.isPending || assign.isPending;
  const error = setStatus.error ?? assign.error;

  return (
    <>
      <header className={styles.convHead}>
        <button
          type="button"
          className={`${styles.button} ${styles.ghost} ${styles.backButton}`}
          onClick={onBack}
          aria-label="Back to conversations"
        >
          ←
        </button>
        <h2 title={c.client_name ?? undefined}>{c.client_name ?? c.client_phone_number ?? c.client_email ?? 'Unknown client'}</h2>
        <span className={styles.chip} data-testid="conversation-status">
          {c.status}
          {c.status === 'snoozed' && c.snoozed_until
            ? ` until ${new Date(c.snoozed_until).toLocaleString('en-US', { weekday: 'short', hour: 'numeric', minute: '2-digit' })}`
            : ''}
        </span>
        <LabelEditor key={id} conversationId={id} label={c.label} />
        <PresenceAvatars conversationId={id} />
        <div className={styles.convTools}>
          {callButton}
          <label className={styles.srOnly} htmlFor={`assignee-${id}`}>
            Assignee
          </label>
          <select
            id={`assignee-${id}`}
            className={styles.select}
            value={c.assigned_staff_id ?? ''}
            disabled={busy || !staff.data}
            onChange={(e) => assign.mutate({ conversationId: id, staffId: e.target.value ? Number(e.target.value) : null })}
          >
            <option value="">Unassigned</option>
            {groupByAvailability(
              (staff.data?.staffs ?? []).filter((s) => s.active || s.staff_id === c.assigned_staff_id),
              availability.data?.staff,
            ).map((group) => {
              const options = group.staff.map((s) => (
                <option key={s.staff_id} value={s.staff_id}>
                  {s.staff_id === me.staffId ? `${s.staff_name} (me)` : s.staff_name}
                </option>
              ));
              return group.label ? (
                <optgroup key={group.label} label={group.label}>
                  {options}
                </optgroup>
              ) : (
                <Fragment key="all">{options}</Fragment>
              );
            })}
          </select>
          <label className={styles.srOnly} htmlFor={`status-${id}`}>
            Pending or snooze
          </label>
          <select
            id={`status-${id}`}
            className={styles.select}
            value=""
            disabled={busy}
            onChange={(e) => {
              const choice = e.target.value;
              if (choice === 'pending') setStatus.mutate({ conversationId: id, status: 'pending' });
              else if (choice)
                setStatus.mutate({ conversationId: id, status: 'snoozed', snoozed_until: snoozeUntil(choice).toISOString() });
            }}
          >
            <option value="">Snooze…</option>
            <option value="1h">1 hour</option>
            <option value="3h">3 hours</option>
            <option value="tomorrow">Tomorrow 9:00</option>
            <option value="week">Next week</option>
            <option value="pending" disabled={c.status === 'pending'}>
              Mark pending
            </option>
          </select>
          <button
            type="button"
            className={`${styles.button} ${resolved ? '' : styles.primary}`}
            disabled={busy}
            onClick={() => setStatus.mutate({ conversationId: id, status: resolved ? 'open' : 'resolved' })}
          >
            {resolved ? 'Reopen' : 'Resolve'}
          </button>
          <button
            type="button"
            className={styles.button}
            aria-pressed={searching}
            aria-label="Search in conversation"
            onClick={() => {
              setSearching(!searching);
              if (searching) onSearchTerm('');
            }}
          >
            Find
          </button>
        </div>
        {error ? (
          <p role="alert" className={styles.error} style={{ width: '100%', margin: 0, fontSize: 13 }}>
            {error.message}
          </p>
        ) : null}
      </header>
      {searching ? <ConversationSearch conversationId={id} term={searchTerm} onTerm={onSearchTerm} onJump={onJump} /> : null}
    </>
  );
}

/** Search in this conversation: matches highlighted in the timeline, each result jumps to its message. */
function ConversationSearch({
  conversationId,
  term,
  onTerm,
  onJump,
}: {
  conversationId: number;
  term: string;
  onTerm: (t: string) => void;
  onJump: (id: number) => void;
}) {
  const [draft, setDraft] = useState(term);
  const active = term.trim().length >= 3;
  const results = trpc.inbox.search.useQuery({ term, conversationId, pageSize: 50 }, { enabled: active });
  return (
    <div className={styles.convSearch} role="search">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          onTerm(draft.trim());
        }}
        style={{ display: 'flex', gap: 6 }}
      >
        <SearchField
          autoFocus
          label="Search this conversation"
          placeholder="At least 3 characters"
          value={draft}
          onValue={setDraft}
        />
      </form>
      <span aria-live="polite" data-testid="conversation-search-count">
        {!active
          ? draft.trim().length > 0 && draft.trim().length < 3
            ? 'Type at least 3 characters'
            : ''
          : results.isPending
            ? 'Searching…'
            : results.error
              ? 'Search failed'
              : `${results.data.total_messages}${results.data.total_capped ? '+' : ''} match${results.data.total_messages === 1 ? '' : 'es'}`}
      </span>
      {results.data?.messages.slice(0, 5).map((m) => (
        <button
          key={m.message_id}
          type="button"
          className={styles.chip}
          style={{ border: 0, cursor: 'pointer' }}
          onClick={() => onJump(m.message_id)}
        >
          {splitMatches((m.content ?? m.subject ?? '').slice(0, 40), term).map((p, i) =>
            p.match ? (
              <mark key={i} className={styles.hit}>
                {p.text}
              </mark>
            ) : (
              p.text
            ),
          )}
        </button>
      ))}
    </div>
  );
}
