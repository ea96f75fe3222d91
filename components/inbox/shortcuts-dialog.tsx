'use client';
import { useEffect, useId, useRef } from 'react';
import styles from './inbox.module.css';
import own from './keyboard.module.css';
import { SHORTCUTS } from './use-inbox-keyboard';
import { TIMELINE_KEYS } from './use-roving-timeline';

const KEY_NAMES: Record<string, string> = {
  ArrowDown: '↓',
  ArrowUp: '↑',
  ArrowLeft: '←',
  ArrowRight: '→',
  Escape: 'Esc',
};

function Keys({ keys }: { keys: readonly string[] }) {
  return (
    <>
      {keys.map((k, i) => (
        <span key={k}>
          {i > 0 ? ' or ' : null}
          <kbd className={own.kbd}>{KEY_NAMES[k] ?? k}</kbd>
        </span>
      ))}
    </>
  );
}

function ShortcutTable({ caption, rows }: { caption: string; rows: readonly { keys: readonly string[]; label: string }[] }) {
  return (
    <table className={own.table}>
      <caption>{caption}</caption>
      <tbody>
        {rows.map((s) => (
          <tr key={s.label}>
            <th scope="row">
              <Keys keys={s.keys} />
            </th>
            <td>{s.label}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * The keyboard shortcuts (`?`), from the tables the keys are handled by. A modal <dialog>: focus
 * stays inside, Esc or Close shuts it, and no inbox key acts behind it while it is open.
 */
export function ShortcutsDialog({ onClose }: { onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  // Unmounting removes it (no close() in a cleanup: its close event would come after a remount).
  useEffect(() => {
    if (ref.current && !ref.current.open) ref.current.showModal();
  }, []);
  return (
    <dialog
      ref={ref}
      className={own.dialog}
      aria-labelledby={titleId}
      onClose={onClose}
      onClick={(e) => {
        // A click on the backdrop (outside the dialog's box) closes it.
        const box = e.currentTarget.getBoundingClientRect();
        const outside = e.clientX < box.left || e.clientX > box.right || e.clientY < box.top || e.clientY > box.bottom;
        if (e.target === e.currentTarget && outside) onClose();
      }}
      onKeyDown={(e) => {
        // The inbox's keys listen on the window: none of them reaches it from here.
        e.stopPropagation();
        if (e.key === 'Escape') {
          e.preventDefault();
          onClose();
        }
      }}
    >
      <h2 id={titleId} className={own.title}>
        Keyboard shortcuts
      </h2>
      <ShortcutTable caption="In the inbox (not while typing)" rows={SHORTCUTS} />
      <ShortcutTable
        caption="In the messages of a conversation"
        rows={[...TIMELINE_KEYS, { keys: ['Tab'], label: 'From the list to the messages to the reply box' }]}
      />
      <button type="button" className={styles.button} onClick={onClose} autoFocus>
        Close
      </button>
    </dialog>
  );
}
