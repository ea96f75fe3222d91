'use client';
import { useEffect, useLayoutEffect, useRef } from 'react';

type Action = 'next' | 'previous' | 'resolve' | 'assignToMe' | 'focusSearch' | 'focusComposer' | 'newMessage' | 'help' | 'back';
type Actions = Record<Action, () => void>;

/**
 * Every key the inbox answers, with the words the shortcuts dialog (`?`) shows: one table, so the
 * dialog cannot list a key that does nothing or miss one that does.
 */
export const SHORTCUTS: readonly { keys: readonly string[]; action: Action; label: string }[] = [
  { keys: ['j', 'ArrowDown'], action: 'next', label: 'Next conversation' },
  { keys: ['k', 'ArrowUp'], action: 'previous', label: 'Previous conversation' },
  { keys: ['e'], action: 'resolve', label: 'Resolve the open conversation' },
  { keys: ['a'], action: 'assignToMe', label: 'Assign the open conversation to me' },
  { keys: ['c'], action: 'focusComposer', label: 'Write a reply' },
  { keys: ['n'], action: 'newMessage', label: 'New message' },
  { keys: ['/'], action: 'focusSearch', label: 'Search' },
  { keys: ['?'], action: 'help', label: 'Show these shortcuts' },
  { keys: ['Escape'], action: 'back', label: 'Leave a text field, close search or the conversation' },
];

/** True while the user types: single-letter shortcuts must not steal their keystrokes. */
function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

function arrowsNavigate(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement) || target === document.body) return true;
  return target.closest('[data-conversation-list]') !== null;
}

/**
 * The inbox's keys (SHORTCUTS): j/k or ↓/↑ move between conversations, e resolves, a assigns to me,
 * / searches, c focuses the composer, n starts a new message, ? lists the keys, Esc goes back (and
 * leaves a text field first).
 */
export function useInboxKeyboard(actions: Actions) {
  // The latest actions for the listener (subscribed once), updated as each render commits.
  const ref = useRef(actions);
  useLayoutEffect(() => {
    ref.current = actions;
  });
  useEffect(() => {
    function onKey(event: KeyboardEvent) {
      if (event.metaKey || event.ctrlKey || event.altKey || event.defaultPrevented) return;
      const a = ref.current;
      if (event.key === 'Escape') {
        if (typing(event.target)) (event.target as HTMLElement).blur();
        else a.back();
        return;
      }
      if (typing(event.target)) return;
      const shortcut = SHORTCUTS.find((s) => s.keys.includes(event.key));
      if (!shortcut) return;
      // Arrows still move inside a focused timeline; they move between conversations from the list or the page.
      if (event.key.startsWith('Arrow') && !arrowsNavigate(event.target)) return;
      event.preventDefault();
      a[shortcut.action]();
    }
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}
