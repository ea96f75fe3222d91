'use client';
import { useState, type KeyboardEvent } from 'react';
import { trpc } from '@/components/trpc/client';
import { SearchField } from '@/components/shared/search-field';
import styles from './inbox.module.css';

type Channel = 'sms' | 'email' | undefined;
export type PickerState = {
  /** What is typed after `/` in the composer, or in the picker's own search box. */
  query: string;
  /** `slash`: typed at the start of a line, the composer keeps the focus; `button`: the picker has its own search box. */
  from: 'slash' | 'button';
  /** The composer's text this choice replaces: the `/query` typed, or the caret when opened by the button. */
  range: { start: number; end: number };
};

/**
 * The saved-reply picker's state and keys, shared by the composer's text box (while `/query` is
 * typed) and the picker's own search box: ↑/↓ move, Enter chooses, Escape closes.
 */
export function useSavedReplyPicker(channel: Channel, onChoose: (savedReplyId: number, state: PickerState) => void) {
  const [state, setState] = useState<PickerState | null>(null);
  const [active, setActive] = useState(0);
  const replies = trpc.inbox.savedReplies.useQuery(
    { search: state?.query.trim() || undefined, channel },
    { enabled: state !== null, placeholderData: (previous) => previous },
  );
  const options = state ? (replies.data?.saved_replies ?? []) : [];
  const open = (next: PickerState | null) => {
    setState(next);
    if (next?.query !== state?.query) setActive(0);
  };
  const choose = (index: number) => {
    const option = options[index];
    if (option && state) {
      setState(null);
      onChoose(option.saved_reply_id, state);
    }
  };
  /** Handles a key while the picker is open; true when it was the picker's. */
  const onKey = (e: KeyboardEvent): boolean => {
    if (!state || e.ctrlKey || e.metaKey || e.altKey) return false;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      const step = e.key === 'ArrowDown' ? 1 : -1;
      setActive((a) => (options.length ? (a + step + options.length) % options.length : 0));
    } else if (e.key === 'Enter') {
      if (!options.length) return false;
      choose(Math.min(active, options.length - 1));
    } else if (e.key === 'Escape') {
      setState(null);
    } else {
      return false;
    }
    e.preventDefault();
    return true;
  };
  return {
    state,
    open,
    options,
    active: Math.min(active, Math.max(options.length - 1, 0)),
    choose,
    onKey,
    loading: replies.isPending,
  };
}

type Picker = ReturnType<typeof useSavedReplyPicker>;

/** The list of saved replies matching the picker's query, as a listbox. */
export function SavedReplyPicker({ picker }: { picker: Picker }) {
  const { state, options, active } = picker;
  if (!state) return null;
  return (
    <div className={styles.picker} data-testid="saved-reply-picker">
      {state.from === 'button' ? (
        <SearchField
          label="Search saved replies"
          placeholder="Search saved replies"
          autoFocus
          value={state.query}
          onValue={(query) => picker.open({ ...state, query })}
          onKeyDown={(e) => {
            // Enter here never submits the composer's form, even with nothing to choose yet.
            if (!picker.onKey(e) && e.key === 'Enter') e.preventDefault();
          }}
        />
      ) : null}
      <ul role="listbox" aria-label="Saved replies" className={styles.pickerList}>
        {options.map((r, i) => (
          <li
            key={r.saved_reply_id}
            role="option"
            aria-selected={i === active}
            className={styles.pickerOption}
            // mousedown, not click: the composer keeps its focus and caret.
            onMouseDown={(e) => {
              e.preventDefault();
              picker.choose(i);
            }}
          >
            <strong>{r.title}</strong>
            <span className={styles.pickerPreview}>{r.body}</span>
          </li>
        ))}
      </ul>
      {options.length === 0 ? (
        <p className={styles.pickerEmpty}>
          {picker.loading ? 'Loading…' : 'No saved reply matches.'} <a href="/settings/saved-replies">Manage saved replies</a>
        </p>
      ) : null}
    </div>
  );
}
