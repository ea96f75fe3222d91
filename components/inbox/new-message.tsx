'use client';
import { useEffect, useId, useRef, useState } from 'react';
import { trpc } from '@/components/trpc/client';
import styles from './inbox.module.css';
import own from './new-message.module.css';

/** At least this many characters before the directory is searched (the trigram index's unit; the server's minimum). */
const MIN_TERM = 3;
/** A typed address worth offering as a new client: something@something.tld, no spaces (checked again by the server). */
const looksLikeEmail = (term: string) => {
  const at = term.indexOf('@');
  return at > 0 && term.indexOf('.', at) > at + 1 && !term.endsWith('.') && !/\s/.test(term);
};

type Choice =
  | { kind: 'client'; clientId: number; label: string; detail: string; optedOut: string | null }
  | { kind: 'phone'; phone: string; label: string; detail: string; optedOut: null }
  | { kind: 'email'; email: string; label: string; detail: string; optedOut: null };

/**
 * "New message" (docs/api.md#new-conversation): search the client directory by name, number (whole
 * or in part, however typed) or email, or type a new number or address; choosing lands in that client's conversation (created
 * if new; a new number or address becomes a lead) with the composer focused. Opt-outs and missing
 * channels are explained there, by the composer, exactly as for any conversation.
 */
export function NewMessageDialog({ onClose, onOpen }: { onClose: () => void; onOpen: (conversationId: number) => void }) {
  const [term, setTerm] = useState('');
  const [active, setActive] = useState(0);
  const inputRef = useRef<HTMLInputElement>(null);
  const listId = useId();
  const trimmed = term.trim();
  // The top bar's client lookup: a name, an address, or a number however it is typed (`555-0175`).
  const found = trpc.inbox.lookupClients.useQuery(
    { term: trimmed },
    { enabled: trimmed.length >= MIN_TERM, placeholderData: (previous) => previous },
  );
  const start = trpc.inbox.startConversation.useMutation({
    onSuccess: (conversation) => {
      if (conversation.conversation_id) onOpen(conversation.conversation_id);
    },
  });

  useEffect(() => inputRef.current?.focus(), []);

  const choices: Choice[] = [];
  if (trimmed.length >= MIN_TERM && found.data) {
    for (const c of found.data.clients) {
      const optedOut = [c.opted_out_sms ? 'texts' : null, c.opted_out_email ? 'email' : null].filter(Boolean).join(' and ');
      choices.push({
        kind: 'client',
        clientId: c.client_id,
        label: c.client_name ?? c.client_phone_number ?? c.client_email ?? `Client ${c.client_id}`,
        detail: [c.client_phone_number, c.client_email].filter(Boolean).join(' · '),
        optedOut: optedOut ? `Opted out of ${optedOut}` : null,
      });
    }
    const phone = found.data.phone_number;
    if (phone && !found.data.clients.some((c) => c.client_phone_number === phone)) {
      choices.push({ kind: 'phone', phone, label: `Text ${phone}`, detail: 'New client (lead)', optedOut: null });
    }
    const email = trimmed.toLowerCase();
    if (looksLikeEmail(email) && !found.data.clients.some((c) => c.client_email?.toLowerCase() === email)) {
      choices.push({ kind: 'email', email, label: `Email ${email}`, detail: 'New client (lead)', optedOut: null });
    }
  }
  const current = Math.min(active, Math.max(0, choices.length - 1));

  const choose = (choice: Choice | undefined) => {
    if (!choice || start.isPending) return;
    start.mutate(
      choice.kind === 'client'
        ? { client_id: choice.clientId }
        : choice.kind === 'phone'
          ? { phone_number: choice.phone }
          : { email: choice.email },
    );
  };

  return (
    <div className={own.backdrop} onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div role="dialog" aria-modal="true" aria-label="New message" className={own.dialog}>
        <h2 className={own.title}>New message</h2>
        <input
          ref={inputRef}
          className={styles.input}
          role="combobox"
          aria-label="Client name, phone number or email"
          aria-expanded={choices.length > 0}
          aria-controls={listId}
          aria-activedescendant={choices.length ? `${listId}-${current}` : undefined}
          placeholder="Name, phone number or email"
          value={term}
          maxLength={100}
          onChange={(e) => {
            setTerm(e.target.value);
            setActive(0);
          }}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown') setActive(Math.min(current + 1, choices.length - 1));
            else if (e.key === 'ArrowUp') setActive(Math.max(current - 1, 0));
            else if (e.key === 'Enter') choose(choices[current]);
            else if (e.key === 'Escape') onClose();
            else return;
            e.preventDefault();
            e.stopPropagation();
          }}
        />
        <ul id={listId} role="listbox" aria-label="Clients" className={own.list}>
          {choices.map((c, i) => (
            <li
              key={`${c.kind}-${c.kind === 'client' ? c.clientId : c.label}`}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === current}
              className={own.option}
              onMouseEnter={() => setActive(i)}
              onClick={() => choose(c)}
            >
              <span className={own.label}>{c.label}</span>
              <span className={own.detail}>{c.detail}</span>
              {c.optedOut ? <span className={styles.failed}>{c.optedOut}</span> : null}
            </li>
          ))}
        </ul>
        {trimmed.length >= MIN_TERM && found.data && choices.length === 0 ? (
          <p className={own.hint}>No client matches. Type a full phone number or email address to start with a new one.</p>
        ) : null}
        {trimmed.length < MIN_TERM ? <p className={own.hint}>Search clients, or type a new number or email address.</p> : null}
        {start.error ? (
          <p role="alert" className={styles.error}>
            {start.error.message}
          </p>
        ) : null}
        <button type="button" className={styles.button} onClick={onClose}>
          Cancel
        </button>
      </div>
    </div>
  );
}
