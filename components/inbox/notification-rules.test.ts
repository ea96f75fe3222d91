import { describe, expect, it } from 'vitest';
import {
  alertBody,
  badgeText,
  bellLabel,
  notificationTag,
  notificationTarget,
  readOnArrival,
  shouldAlert,
  tabTitle,
} from './notification-rules';

describe('the bell in the tab title and on its button', () => {
  it('puts the unread count before the title, and nothing at 0', () => {
    expect(tabTitle(3)).toBe('(3) Inbox');
    expect(tabTitle(0)).toBe('Inbox');
    expect(tabTitle(1, 'Settings')).toBe('(1) Settings');
  });

  it('names the count on the button and holds the badge to three characters', () => {
    expect(bellLabel(2)).toBe('Notifications, 2 unread');
    expect(bellLabel(0)).toBe('Notifications, none unread');
    expect(badgeText(7)).toBe('7');
    expect(badgeText(100)).toBe('99+');
  });
});

describe('a browser notification', () => {
  const mine = { browser: true, conversationId: 5 };

  it('shows when the tab is hidden, whatever is open', () => {
    expect(shouldAlert(mine, { hidden: true, openConversationId: null })).toBe(true);
    expect(shouldAlert(mine, { hidden: true, openConversationId: 5 })).toBe(true);
  });

  it('shows in a visible tab only while another conversation is open', () => {
    expect(shouldAlert(mine, { hidden: false, openConversationId: 6 })).toBe(true);
    expect(shouldAlert(mine, { hidden: false, openConversationId: 5 })).toBe(false);
    expect(shouldAlert(mine, { hidden: false, openConversationId: null })).toBe(false);
    // Not of a conversation (an endpoint switched off): any open conversation is another one.
    expect(shouldAlert({ browser: true, conversationId: null }, { hidden: false, openConversationId: 5 })).toBe(true);
  });

  it('never shows when the server says not to (the staff member’s choice, or away)', () => {
    expect(shouldAlert({ ...mine, browser: false }, { hidden: true, openConversationId: null })).toBe(false);
    expect(shouldAlert({ ...mine, browser: false }, { hidden: false, openConversationId: 6 })).toBe(false);
  });

  it('is read as it arrives when its conversation is open in a visible tab, and only then', () => {
    expect(readOnArrival(mine, { hidden: false, openConversationId: 5 })).toBe(true);
    expect(readOnArrival(mine, { hidden: true, openConversationId: 5 })).toBe(false);
    expect(readOnArrival(mine, { hidden: false, openConversationId: 6 })).toBe(false);
    expect(readOnArrival({ conversationId: null }, { hidden: false, openConversationId: null })).toBe(false);
    // Never both: what is read on arrival is not also shown on the desktop.
    expect(shouldAlert(mine, { hidden: false, openConversationId: 5 })).toBe(false);
  });

  it('is one per conversation (the tag), one per notification without one', () => {
    expect(notificationTag({ id: 9, conversationId: 5 })).toBe('conversation-5');
    expect(notificationTag({ id: 9, conversationId: null })).toBe('notification-9');
  });

  it('opens the conversation, or the webhooks page for an endpoint switched off', () => {
    expect(notificationTarget({ kind: 'mentioned', conversationId: 5 })).toEqual({ conversationId: 5 });
    expect(notificationTarget({ kind: 'webhook_disabled', conversationId: null })).toEqual({ href: '/settings/webhooks' });
    expect(notificationTarget({ kind: 'assigned', conversationId: null })).toBeNull();
  });

  it('says how many were folded into it', () => {
    expect(alertBody({ body: 'See you at 3', count: 1 })).toBe('See you at 3');
    expect(alertBody({ body: 'See you at 3', count: 3 })).toBe('See you at 3 (×3)');
    expect(alertBody({ body: '', count: 2 })).toBe('×2');
  });
});
