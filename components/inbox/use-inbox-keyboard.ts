'use client';
import { useEffect, useLayoutEffect, useRef } from 'react';

type Actions = {
  next: () => void;
  previous: () => void;
  resolve: () => void;
  assignToMe: () => void;
  focusSearch: () => void;
  focusComposer: () => void;
  newMessage: () => void;
  back: () => void;
};

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
 * The inbox's keys: j/k or ↓/↑ move between conversations, e resolves, a assigns to me, / searches,
 * c focuses the composer, n starts a new message, Esc goes back (and leaves a text field first).
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
      const handler: Record<string, () => void> = {
        j: a.next,
        ArrowDown: a.next,
        k: a.previous,
        ArrowUp: a.previous,
        e: a.resolve,
        a: a.assignToMe,
        '/': a.focusSearch,
        c: a.focusComposer,
        n: a.newMessage,
      };
      const run = handler[event.key];
      if (!run) return;
      // Arrows still scroll a focused timeline; they move between conversations from the list or the page.
      if (event.key.startsWith('Arrow') && !arrowsNavigate(event.target)) return;
      event.preventDefault();
      run();
    }
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}
