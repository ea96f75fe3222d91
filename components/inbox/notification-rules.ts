import type { NotificationFrame } from '@/server/shared/notifications';

/**
 * The bell's pure rules (tested in notification-rules.test.ts): the tab title, when a notification
 * frame becomes a browser notification (and the sound), the tag that keeps one per conversation,
 * and where clicking one leads.
 */

type FrameNotification = NotificationFrame['notification'];

/** The tab title: the bell's unread count before the page's own title, none at 0. */
export function tabTitle(unread: number, base = 'Inbox'): string {
  return unread > 0 ? `(${unread}) ${base}` : base;
}

/** The bell button's accessible name, with the count it shows. */
export function bellLabel(unread: number): string {
  return unread > 0 ? `Notifications, ${unread} unread` : 'Notifications, none unread';
}

/** The badge's text: a large count is held to three characters. */
export function badgeText(unread: number): string {
  return unread > 99 ? '99+' : String(unread);
}

/**
 * Whether a notification also goes to the desktop (and plays the sound): the server says the staff
 * member wants it there now (`browser`: their choice, and they are available), and they are not
 * already looking at it: the tab is hidden, or a conversation other than its own is open. With the
 * tab in front and no conversation open, the bell alone tells (the list is in view).
 */
export function shouldAlert(
  notification: Pick<FrameNotification, 'browser' | 'conversationId'>,
  page: { hidden: boolean; openConversationId: number | null },
): boolean {
  if (!notification.browser) return false;
  if (page.hidden) return true;
  return page.openConversationId !== null && page.openConversationId !== notification.conversationId;
}

/**
 * Whether a notification is read as it arrives: it is of the conversation open in a visible tab
 * (the staff member sees its message already; it arrived after the conversation was read on opening).
 */
export function readOnArrival(
  notification: Pick<FrameNotification, 'conversationId'>,
  page: { hidden: boolean; openConversationId: number | null },
): boolean {
  return !page.hidden && notification.conversationId !== null && notification.conversationId === page.openConversationId;
}

/** One desktop notification per conversation, replaced as more arrive; one per notification otherwise. */
export function notificationTag(notification: Pick<FrameNotification, 'id' | 'conversationId'>): string {
  return notification.conversationId !== null ? `conversation-${notification.conversationId}` : `notification-${notification.id}`;
}

/** Where a notification leads: its conversation, or (an endpoint switched off) the webhooks page. */
export function notificationTarget(
  notification: Pick<FrameNotification, 'kind' | 'conversationId'>,
): { conversationId: number } | { href: string } | null {
  if (notification.kind === 'webhook_disabled') return { href: '/settings/webhooks' };
  return notification.conversationId !== null ? { conversationId: notification.conversationId } : null;
}

/** The desktop notification's body: the count when several were folded into it. */
export function alertBody(notification: Pick<FrameNotification, 'body' | 'count'>): string {
  if (notification.count <= 1) return notification.body;
  return notification.body ? `${notification.body} (×${notification.count})` : `×${notification.count}`;
}
