'use client';
import { keepPreviousData } from '@tanstack/react-query';
import { useEffect, useId, useState, type MouseEvent, type ReactNode, type RefObject } from 'react';
import { trpc } from '@/components/trpc/client';
import { typedPhoneDigits } from '@/server/shared/typed-phone';
import { relativeTime } from './format';
import { Highlighted } from './message-view';
import { MatchedText } from './search-results';
import controls from '@/components/shared/controls.module.css';
import { useDebounced } from '@/components/shared/use-debounced';
import own from './search.module.css';

/** The server's minimum (a trigram index cannot serve fewer characters). */
const MIN_TERM = 3;
/** Typing pauses this long before the term is searched. */
const DEBOUNCE_MS = 200;
const CLIENTS_SHOWN = 6;
const MESSAGES_SHOWN = 5;

type Option =
  | { kind: 'client'; clientId: number; conversationId: number | null }
  | { kind: 'message'; conversationId: number; messageId: number }
  | { kind: 'all' };

/**
 * The top bar's one search box (docs/api.md#client-search): as the user types, the clients the term
 * finds (name, email, a number whole or in part however it is typed) and the messages that hold
 * it, grouped, in one list the arrow keys walk. Enter chooses the highlighted entry, or with none
 * opens every message result in the list column; Escape closes the list. A client opens in their
 * conversation, started when they have none (as New message starts one); a message opens at its
 * place in the conversation.
 */
export function GlobalSearch({
  inputRef,
  onOpen,
  onStarted,
  onAllMessages,
}: {
  inputRef: RefObject<HTMLInputElement | null>;
  /** A client's conversation, or the conversation of a message (`at`: to jump to it). */
  onOpen: (conversationId: number, at?: { messageId: number; term: string }) => void;
  /** A conversation just started for a client who had none: the composer is what they need next. */
  onStarted: (conversationId: number) => void;
  onAllMessages: (term: string) => void;
}) {
  const [term, setTerm] = useState('');
  const [expanded, setExpanded] = useState(false);
  const [active, setActive] = useState(-1);
  const listId = useId();
  const trimmed = term.trim();
  const searched = useDebounced(trimmed, DEBOUNCE_MS);
  const enabled = searched.length >= MIN_TERM;
  // While the next term is on its way, the list keeps the last answer instead of emptying.
  const keep = { enabled, placeholderData: keepPreviousData, staleTime: 10_000 };
  const clients = trpc.inbox.lookupClients.useQuery({ term: searched, limit: CLIENTS_SHOWN }, keep);
  const messages = trpc.inbox.search.useQuery({ term: searched, pageSize: MESSAGES_SHOWN }, keep);
  const start = trpc.inbox.startConversation.useMutation({
    onSuccess: (conversation) => {
      if (conversation.conversation_id) onStarted(conversation.conversation_id);
    },
  });

  const ready = enabled && trimmed.length >= MIN_TERM;
  const clientRows = ready ? (clients.data?.clients ?? []) : [];
  const messageRows = ready ? (messages.data?.messages ?? []) : [];
  const options: Option[] = [
    ...clientRows.map((c): Option => ({ kind: 'client', clientId: c.client_id, conversationId: c.conversation_id })),
    ...messageRows.map((m): Option => ({ kind: 'message', conversationId: m.conversation_id, messageId: m.message_id })),
    ...(messageRows.length ? [{ kind: 'all' } as const] : []),
  ];
  const current = active < options.length ? active : -1;
  const open = expanded && trimmed.length >= MIN_TERM;
  const optionId = (i: number) => `${listId}-${i}`;
  const pending = enabled && (clients.isPending || messages.isPending || searched !== trimmed);
  const total = messages.data ? `${messages.data.total_messages}${messages.data.total_capped ? '+' : ''}` : '';
  // A number typed in part is highlighted by its digits in the numbers shown.
  const digits = typedPhoneDigits(searched);

  useEffect(() => {
    if (current >= 0) document.getElementById(optionId(current))?.scrollIntoView({ block: 'nearest' });
    // optionId depends only on listId, fixed for the component's life.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [current]);

  /** What makes entry `i` of the list an option: its id for aria-activedescendant, hover, choice. */
  const optionProps = (i: number) => ({
    id: optionId(i),
    role: 'option' as const,
    'aria-selected': i === current,
    // Only a pointer that moves picks an entry: a list that opens under a resting pointer gets
    // Chromium's synthetic mouse events, which must not turn Enter into "open that one".
    onMouseMove: (e: MouseEvent) => {
      if (e.movementX || e.movementY) setActive(i);
    },
    onClick: () => choose(options[i]),
  });
  const close = () => {
    setExpanded(false);
    setActive(-1);
  };
  const choose = (option: Option | undefined) => {
    if (!option) {
      if (trimmed.length >= MIN_TERM) onAllMessages(trimmed);
      close();
      return;
    }
    if (option.kind === 'all') {
      onAllMessages(searched);
      close();
      return;
    }
    const done = () => {
      close();
      setTerm('');
    };
    if (option.kind === 'client' && option.conversationId === null) {
      // The list stays until the conversation exists, to say so if it cannot be started.
      if (!start.isPending) start.mutate({ client_id: option.clientId }, { onSuccess: done });
      return;
    }
    if (option.kind === 'client') onOpen(option.conversationId!);
    else onOpen(option.conversationId, { messageId: option.messageId, term: searched });
    done();
  };

  return (
    <div className={own.search}>
      <input
        ref={inputRef}
        className={`${controls.field} ${own.input}`}
        type="search"
        role="combobox"
        aria-label="Search clients and messages"
        aria-autocomplete="list"
        aria-expanded={open}
        aria-controls={open ? listId : undefined}
        aria-activedescendant={open && current >= 0 ? optionId(current) : undefined}
        aria-keyshortcuts="/"
        placeholder="Search clients and messages  /"
        autoComplete="off"
        maxLength={100}
        value={term}
        onChange={(e) => {
          setTerm(e.target.value);
          setExpanded(true);
          setActive(-1);
        }}
        onFocus={() => setExpanded(true)}
        onBlur={close}
        onKeyDown={(e) => {
          if (e.nativeEvent.isComposing) return;
          if (e.key === 'ArrowDown') {
            setExpanded(true);
            setActive(Math.min(current + 1, options.length - 1));
          } else if (e.key === 'ArrowUp') setActive(Math.max(current - 1, -1));
          else if (e.key === 'Enter') choose(open ? options[current] : undefined);
          else if (e.key === 'Escape' && open) close();
          else return;
          e.preventDefault();
          e.stopPropagation();
        }}
      />
      {open ? (
        // Clicks must not take the focus from the box (its blur closes the list).
        <div className={own.popup} onMouseDown={(e) => e.preventDefault()}>
          <div id={listId} role="listbox" aria-label="Clients and messages">
            {clientRows.length ? (
              <Group label="Clients">
                {clientRows.map((c, i) => {
                  const number = c.client_phone_number;
                  const optedOut = [c.opted_out_sms ? 'texts' : null, c.opted_out_email ? 'email' : null]
                    .filter(Boolean)
                    .join(' and ');
                  return (
                    <div key={`c${c.client_id}`} {...optionProps(i)} className={own.option}>
                      <OptionHead when={c.conversation_id === null ? 'No conversation yet' : relativeTime(c.last_activity_at)}>
                        <Highlighted
                          text={c.client_name ?? number ?? c.client_email ?? `Client ${c.client_id}`}
                          term={searched}
                        />
                      </OptionHead>
                      <span className={own.detail}>
                        {number ? <Highlighted text={number} term={digits ?? searched} /> : null}
                        {number && c.client_email ? ' · ' : null}
                        {c.client_email ? <Highlighted text={c.client_email} term={searched} /> : null}
                        {optedOut ? <span className={own.optedOut}> · Opted out of {optedOut}</span> : null}
                      </span>
                    </div>
                  );
                })}
              </Group>
            ) : null}
            {messageRows.length ? (
              <Group label="Messages">
                {messageRows.map((m, j) => {
                  const i = clientRows.length + j;
                  return (
                    <div key={`m${m.message_id}`} {...optionProps(i)} className={own.option}>
                      <OptionHead when={relativeTime(m.sent_at)}>
                        {m.client_name ?? 'Unknown'}
                        {m.message_type === 'NOTE' ? ' · note' : ''}
                      </OptionHead>
                      <span className={own.snippet}>
                        <MatchedText subject={m.subject} content={m.content} term={searched} />
                      </span>
                    </div>
                  );
                })}
                <div {...optionProps(options.length - 1)} className={`${own.option} ${own.all}`}>
                  Every message with “{searched}” ({total})
                </div>
              </Group>
            ) : null}
          </div>
          <p className={own.status} role="status">
            {start.error
              ? `Could not start a conversation: ${start.error.message}`
              : pending && !options.length
                ? 'Searching…'
                : clients.error || messages.error
                  ? 'Search failed. Try again.'
                  : !options.length && enabled
                    ? `No clients or messages match “${searched}”.`
                    : ''}
          </p>
        </div>
      ) : null}
    </div>
  );
}

/** A group of the list, named for screen readers and shown as a small heading. */
function Group({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div role="group" aria-label={label}>
      <div className={own.groupLabel} aria-hidden="true">
        {label}
      </div>
      {children}
    </div>
  );
}

/** An option's first line: who, and when. */
function OptionHead({ when, children }: { when: string; children: ReactNode }) {
  return (
    <span className={own.optionHead}>
      <span className={own.name}>{children}</span>
      <span className={own.when}>{when}</span>
    </span>
  );
}
