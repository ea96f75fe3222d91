'use client';
import { useEffect, useRef, type KeyboardEvent, type RefObject } from 'react';

/** The timeline's own keys, listed by the shortcuts dialog beside the inbox's. */
export const TIMELINE_KEYS: readonly { keys: readonly string[]; label: string }[] = [
  { keys: ['ArrowUp', 'ArrowDown'], label: 'Previous / next message' },
  { keys: ['Home', 'End'], label: 'First / last message' },
  { keys: ['ArrowRight', 'Enter'], label: "Reach a message's buttons (flag, cancel, retry…)" },
  { keys: ['ArrowLeft', 'Escape'], label: 'Back from the buttons to the message' },
];

/** An entry of the timeline: any direct child but a day separator (messages, notes, calls, activity lines, "Load earlier"). */
const ENTRY = ":scope > :not([role='separator'])";
/** What a browser would put in the Tab order inside an entry. */
const CONTROL =
  'a[href], button, input, select, textarea, summary, iframe, audio[controls], video[controls], [contenteditable], [tabindex]';
/** Fields that need their arrow keys for themselves. */
const FIELD = 'input, select, textarea, audio, video, [contenteditable]';

/**
 * The timeline as ONE tab stop (a roving tabindex): Tab lands on one entry (the newest, or the
 * last one used), ↑/↓/Home/End move between entries, → or Enter reach the entry's own buttons and
 * ← or Esc come back. Every other entry and control is out of the Tab order, so Tab goes from the
 * conversation list to the timeline to the composer in a few presses however many messages have
 * a flag button. The tabindex attributes are kept on the DOM (after every render and every
 * mutation of the timeline), so the entries themselves need no knowledge of it.
 *
 * `ref`: the scrolling timeline element; the returned handler goes on its onKeyDown (a React
 * handler, so a control's own key handling inside an entry runs first and can claim its keys).
 */
export function useRovingTimeline(ref: RefObject<HTMLElement | null>) {
  /** The entry Tab lands on, once the reader moved or clicked (until then, the newest). */
  const active = useRef<HTMLElement | null>(null);
  const observed = useRef<{ root: HTMLElement; observer: MutationObserver } | null>(null);

  // After every render: the timeline element may be new (loading → loaded), entries may have come.
  useEffect(() => {
    const root = ref.current;
    if (observed.current?.root !== root) {
      observed.current?.observer.disconnect();
      observed.current = null;
      if (root) {
        const observer = new MutationObserver(() => apply(root, active.current));
        observer.observe(root, { childList: true, subtree: true });
        observed.current = { root, observer };
      }
    }
    if (root) apply(root, active.current);
  });
  useEffect(() => () => observed.current?.observer.disconnect(), []);

  function focusEntry(root: HTMLElement, entry: HTMLElement | undefined) {
    if (!entry) return;
    active.current = entry;
    apply(root, entry);
    entry.focus();
  }

  return {
    /** Focus moving in by a click or a search jump makes that entry the one Tab returns to. */
    onFocus(event: { target: EventTarget }) {
      const root = ref.current;
      const entry = root && entryOf(root, event.target);
      if (root && entry && entry !== active.current) {
        active.current = entry;
        apply(root, entry);
      }
    },
    onKeyDown(event: KeyboardEvent<HTMLElement>) {
      const root = ref.current;
      if (!root || event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
      const target = event.target as HTMLElement;
      const entry = entryOf(root, target);
      if (!entry) return;
      const list = entries(root);
      const at = list.indexOf(entry);
      const onEntry = target === entry;
      const controls = controlsOf(entry);
      let handled = true;
      if (onEntry) {
        if (event.key === 'ArrowDown') focusEntry(root, list[at + 1]);
        else if (event.key === 'ArrowUp') focusEntry(root, list[at - 1]);
        else if (event.key === 'Home') focusEntry(root, list[0]);
        else if (event.key === 'End') focusEntry(root, list.at(-1));
        else if ((event.key === 'ArrowRight' || event.key === 'Enter') && controls.length) controls[0]!.focus();
        else handled = false;
      } else if (event.key === 'Escape') {
        entry.focus();
      } else if (target.matches(FIELD)) {
        handled = false; // a field keeps its arrows (a date's parts, a text's caret)
      } else {
        const i = controls.indexOf(target);
        if (event.key === 'ArrowRight') controls[Math.min(i + 1, controls.length - 1)]?.focus();
        else if (event.key === 'ArrowLeft') (i > 0 ? controls[i - 1]! : entry).focus();
        else if (event.key === 'ArrowDown') focusEntry(root, list[at + 1] ?? entry);
        else if (event.key === 'ArrowUp') focusEntry(root, list[at - 1] ?? entry);
        else handled = false;
      }
      if (handled) {
        // Claimed here: the inbox's own keys (↑/↓ between conversations, Esc closes) stay out of it.
        event.preventDefault();
        event.stopPropagation();
      }
    },
  };
}

function entries(root: HTMLElement): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(ENTRY)];
}

function entryOf(root: HTMLElement, target: EventTarget | null): HTMLElement | null {
  let el = target instanceof HTMLElement ? target : null;
  while (el && el.parentElement !== root) el = el.parentElement;
  return el && el.getAttribute('role') !== 'separator' ? el : null;
}

/** An entry's controls in document order (itself excluded), hidden ones skipped. */
function controlsOf(entry: HTMLElement): HTMLElement[] {
  return [...entry.querySelectorAll<HTMLElement>(CONTROL)].filter(
    (el) => !(el as HTMLButtonElement).disabled && el.getClientRects().length > 0,
  );
}

/** One entry in the Tab order (`active` if still there, else the newest); nothing else inside. */
function apply(root: HTMLElement, active: HTMLElement | null) {
  const list = entries(root);
  const current = active && list.includes(active) ? active : list.at(-1);
  for (const el of root.querySelectorAll<HTMLElement>(CONTROL)) {
    if (!list.includes(el) && el.tabIndex !== -1) el.tabIndex = -1;
  }
  for (const el of list) {
    const index = el === current ? 0 : -1;
    if (el.tabIndex !== index || !el.hasAttribute('tabindex')) el.tabIndex = index;
  }
  // An empty timeline (still scrollable by keyboard) is the stop itself.
  root.tabIndex = list.length ? -1 : 0;
}
