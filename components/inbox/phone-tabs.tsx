'use client';
import phone from './phone.module.css';

/** The part of the inbox a phone shows (phone.module.css); a desk shows them all side by side. */
export type PhonePane = 'views' | 'list' | 'conversation' | 'client';

const TABS: { pane: PhonePane; label: string; needsConversation: boolean }[] = [
  { pane: 'views', label: 'Views', needsConversation: false },
  { pane: 'list', label: 'Conversations', needsConversation: false },
  { pane: 'conversation', label: 'Messages', needsConversation: true },
  { pane: 'client', label: 'Client', needsConversation: true },
];

/**
 * The phone's tab bar, below the part it shows: the views (Open, Mine, Unread, labels…), the
 * conversation list, the open conversation and its client (number, consent, opt-out). Hidden on a
 * desk, where every part has its own column.
 */
export function PhoneTabs({
  pane,
  conversationOpen,
  onPane,
}: {
  pane: PhonePane;
  conversationOpen: boolean;
  onPane: (pane: PhonePane) => void;
}) {
  return (
    <nav className={phone.tabs} aria-label="Inbox sections">
      {TABS.map((t) => (
        <button
          key={t.pane}
          type="button"
          aria-current={pane === t.pane ? 'true' : undefined}
          disabled={t.needsConversation && !conversationOpen}
          onClick={() => onPane(t.pane)}
        >
          {t.label}
        </button>
      ))}
    </nav>
  );
}
