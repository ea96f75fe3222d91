import type { EventNotificationKind } from '@/server/shared/notifications';
import { oneLine } from '@/server/lib/text';

/**
 * The words of staff notification emails (docs/api.md#email-notifications-and-the-waiting-digest):
 * a notification's email and the waiting digest, as a subject, a plain text and a simple HTML body,
 * each naming the business and linking into the inbox at the conversation. Pure, so the sender and
 * its tests read the same words.
 */

export type Mail = { subject: string; text: string; html: string };

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The inbox's link to one conversation (app/(inbox)/inbox/[conversationId]: it opens it in the inbox). */
const conversationLink = (baseUrl: string, conversationId: number) => `${baseUrl}/inbox/${conversationId}`;

/** The notifications settings page, where a staff member turns these emails off. */
const settingsLink = (baseUrl: string) => `${baseUrl}/settings/notifications`;

function page(businessName: string, paragraphs: string[], baseUrl: string): string {
  return [
    '<!doctype html><html><body style="font-family: sans-serif; line-height: 1.4; color: #1f2328">',
    ...paragraphs,
    `<p style="color: #59636e; font-size: 12px">${escapeHtml(businessName)} · sent to staff by the inbox. ` +
      `<a href="${escapeHtml(settingsLink(baseUrl))}">Choose which emails you get</a>.</p>`,
    '</body></html>',
  ].join('\n');
}

const footer = (businessName: string, baseUrl: string) =>
  `\n--\n${businessName} · sent to staff by the inbox. Choose which emails you get: ${settingsLink(baseUrl)}\n`;

/** The email of one notification: its title as the subject (after the business's name), its body, the count, the link. */
export function notificationMail(n: {
  businessName: string;
  kind: EventNotificationKind;
  title: string;
  body: string;
  count: number;
  conversationId: number | null;
  baseUrl: string;
}): Mail {
  // One line: whatever the title holds, no header can be smuggled into the subject.
  const title = oneLine(n.title);
  const subject = `[${oneLine(n.businessName)}] ${title}`;
  const more = n.count > 1 ? `${n.count} updates in this conversation since you last looked.` : '';
  const link = n.conversationId === null ? null : conversationLink(n.baseUrl, n.conversationId);
  const text = [
    title,
    n.body ? `\n${n.body}` : '',
    more ? `\n${more}` : '',
    link ? `\nOpen the conversation: ${link}` : `\nOpen the inbox: ${n.baseUrl}/inbox`,
    footer(n.businessName, n.baseUrl),
  ].join('\n');
  const html = page(
    n.businessName,
    [
      `<p><strong>${escapeHtml(title)}</strong></p>`,
      n.body
        ? `<blockquote style="margin: 0 0 1em; padding-left: 1em; border-left: 3px solid #d1d9e0">${escapeHtml(n.body)}</blockquote>`
        : '',
      more ? `<p>${escapeHtml(more)}</p>` : '',
      `<p><a href="${escapeHtml(link ?? `${n.baseUrl}/inbox`)}">${link ? 'Open the conversation' : 'Open the inbox'}</a></p>`,
    ].filter(Boolean),
    n.baseUrl,
  );
  return { subject, text, html };
}

export type DigestItem = {
  conversationId: number;
  clientLabel: string;
  /** Business minutes it has waited (opening hours only). */
  waitingMinutes: number;
  /** Assigned to the recipient (true) or to nobody (false). */
  mine: boolean;
};

/** "45 min", "2 h 5 min", "3 h" */
function businessDuration(minutes: number): string {
  const m = Math.floor(minutes);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
}

/** The waiting digest: the conversations, longest waiting first, each with its link. */
export function digestMail(d: { businessName: string; items: DigestItem[]; thresholdMinutes: number; baseUrl: string }): Mail {
  const n = d.items.length;
  const subject = `[${oneLine(d.businessName)}] ${n} conversation${n === 1 ? '' : 's'} waiting for a reply`;
  const intro = `Waiting for a reply longer than ${businessDuration(d.thresholdMinutes)} of opening hours:`;
  const line = (i: DigestItem) =>
    `${oneLine(i.clientLabel)}, waiting ${businessDuration(i.waitingMinutes)}${i.mine ? '' : ' (unassigned)'}`;
  const text = [
    intro,
    '',
    ...d.items.map((i) => `- ${line(i)}\n  ${conversationLink(d.baseUrl, i.conversationId)}`),
    footer(d.businessName, d.baseUrl),
  ].join('\n');
  const html = page(
    d.businessName,
    [
      `<p>${escapeHtml(intro)}</p>`,
      '<ul>',
      ...d.items.map(
        (i) => `<li><a href="${escapeHtml(conversationLink(d.baseUrl, i.conversationId))}">${escapeHtml(line(i))}</a></li>`,
      ),
      '</ul>',
    ],
    d.baseUrl,
  );
  return { subject, text, html };
}
