'use client';
import { keepPreviousData } from '@tanstack/react-query';
import { useId, useState, type KeyboardEvent } from 'react';
import { trpc } from '@/components/trpc/client';
import { MENTION_QUERY_MAX_LENGTH } from '@/server/shared/limits';
import styles from './inbox.module.css';
import { mentionedIn, type ChosenMention } from './mentions-in-text';

type AtQuery = { query: string; start: number; end: number };

const AT_QUERY = new RegExp(`(?:^|\\s)@([^\\s@]{0,${MENTION_QUERY_MAX_LENGTH}})$`);

/** The `@query` just before the caret (at the start or after a space), or null. */
function atQuery(el: HTMLTextAreaElement): AtQuery | null {
  const end = el.selectionStart;
  const match = AT_QUERY.exec(el.value.slice(0, end));
  return match ? { query: match[1]!, start: end - match[1]!.length - 1, end } : null;
}

/**
 * @mentions in the note composer (docs/api.md#mentions): typing `@` opens a list of the business's
 * active staff, narrowed by what follows; ↑/↓ move, Enter or Tab chooses, Escape closes. The chosen
 * name goes into the text and its staff id is kept beside it: the note is sent with the ids whose
 * names are still in the text (the server never reads names back out of words).
 */
export function useMentionPicker(enabled: boolean) {
  const [at, setAt] = useState<AtQuery | null>(null);
  // Searched on the server, whatever the size of the team; while the next answer comes, the last
  // one narrowed here (it held every match of a shorter fragment's first names).
  const found = trpc.inbox.mentionable.useQuery(
    { query: at?.query ?? '' },
    { enabled: enabled && at !== null, staleTime: 60_000, placeholderData: keepPreviousData },
  );
  const [active, setActive] = useState(0);
  const [chosen, setChosen] = useState<ChosenMention[]>([]);
  const listId = useId();
  const needle = at?.query.toLowerCase() ?? '';
  const options = enabled && at ? (found.data ?? []).filter((s) => s.staff_name.toLowerCase().includes(needle)) : [];
  const current = Math.min(active, Math.max(options.length - 1, 0));

  /** Puts the chosen name in place of `@query` in `text`; answers the new text and caret. */
  function choose(index: number, text: string): { text: string; caret: number } | null {
    const option = options[index];
    if (!option || !at) return null;
    const inserted = `@${option.staff_name} `;
    setChosen((list) => [
      ...list.filter((m) => m.staffId !== option.staff_id),
      { staffId: option.staff_id, name: option.staff_name },
    ]);
    setAt(null);
    return { text: text.slice(0, at.start) + inserted + text.slice(at.end), caret: at.start + inserted.length };
  }

  return {
    open: at !== null && options.length > 0,
    options,
    active: current,
    listId,
    optionId: (i: number) => `${listId}-${i}`,
    /** The text or caret changed: opens, narrows or closes the list. */
    follow(el: HTMLTextAreaElement) {
      if (!enabled) return;
      const next = atQuery(el);
      if (next?.query !== at?.query) setActive(0);
      setAt(next);
    },
    choose,
    /** A key in the text box while the list is open: true when it was the picker's (`apply` takes a choice). */
    onKey(e: KeyboardEvent, apply: (index: number) => void): boolean {
      if (!at || options.length === 0 || e.ctrlKey || e.metaKey || e.altKey) return false;
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        const step = e.key === 'ArrowDown' ? 1 : -1;
        setActive((current + step + options.length) % options.length);
      } else if (e.key === 'Enter' || e.key === 'Tab') apply(current);
      else if (e.key === 'Escape') setAt(null);
      else return false;
      e.preventDefault();
      return true;
    },
    /** The staff mentioned in `text`: those chosen whose `@name` is still in it (mentions-in-text.ts). */
    mentionsIn: (text: string) => mentionedIn(chosen, text),
    reset() {
      setAt(null);
      setChosen([]);
    },
  };
}

type MentionPicker = ReturnType<typeof useMentionPicker>;

/** The text box's attributes while the picker may open (the combobox pattern on a textarea). */
export const mentionBoxProps = (picker: MentionPicker) => ({
  'aria-autocomplete': 'list' as const,
  'aria-controls': picker.open ? picker.listId : undefined,
  'aria-activedescendant': picker.open ? picker.optionId(picker.active) : undefined,
});

/** The list of staff to mention, under the note's text box. */
export function MentionList({ picker, onChoose }: { picker: MentionPicker; onChoose: (index: number) => void }) {
  if (!picker.open) return null;
  return (
    <div className={styles.picker}>
      <ul role="listbox" id={picker.listId} aria-label="Mention a colleague" className={styles.pickerList}>
        {picker.options.map((s, i) => (
          <li
            key={s.staff_id}
            id={picker.optionId(i)}
            role="option"
            aria-selected={i === picker.active}
            className={styles.pickerOption}
            // mousedown, not click: the text box keeps its focus and caret.
            onMouseDown={(e) => {
              e.preventDefault();
              onChoose(i);
            }}
          >
            <strong>{s.staff_name}</strong>
            {s.role !== 'staff' ? <span className={styles.pickerPreview}>{s.role}</span> : null}
          </li>
        ))}
      </ul>
    </div>
  );
}
