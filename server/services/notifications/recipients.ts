import type { LoggedEvent } from '@/server/services/events/dispatch';
import { cut, oneLine } from '@/server/lib/text';
import {
  MAX_NOTIFICATION_BODY,
  MAX_NOTIFICATION_TITLE,
  resolvePreferences,
  type EventNotificationKind,
  type StoredNotificationPreferences,
} from '@/server/shared/notifications';
import { STAFF_MANAGER_ROLES } from '@/server/shared/staff-availability';

/**
 * Who is told what, from an event and what the handler read about it (./handler.ts): pure, so every
 * rule of docs/api.md#notifications is tested without a database.
 */

export type StaffMember = {
  id: number;
  name: string;
  role: string;
  locationId: number | null;
  /** Not away and on shift now: only they get browser and email notifications. */
  available: boolean;
  hasEmail: boolean;
  preferences: StoredNotificationPreferences | null;
};

export type ConversationFacts = {
  id: number;
  assignedStaffId: number | null;
  locationId: number | null;
  /** The client as staff know them: name, else number or address. */
  clientLabel: string;
};

export type MessageFacts = { id: number; content: string | null; callOutcome: string | null; durationSeconds: number | null };

export type Context = {
  staff: ReadonlyMap<number, StaffMember>;
  conversations: ReadonlyMap<number, ConversationFacts>;
  messages: ReadonlyMap<number, MessageFacts>;
  emailDelayMinutes: number;
  /** When the handler reads the events: how late it is decides what a notification may still do. */
  now: Date;
};

/**
 * A handler catching up (after the worker was down, or with its cursor set back over the retained
 * log) is late: an event read more than LATE_MS after it happened rings no browser and plans no
 * email (the bell only; the waiting digest covers what still waits), and one more than STALE_MS old
 * tells nobody.
 */
export const LATE_MS = 60 * 60_000;
export const STALE_MS = 24 * 60 * 60_000;

/** One notification to write (or fold into the staff member's unread one of the conversation). */
export type Planned = {
  eventId: number;
  staffId: number;
  kind: EventNotificationKind;
  conversationId: number | null;
  messageId: number | null;
  /** When the event happened. */
  eventAt: Date;
  title: string;
  body: string;
  inApp: boolean;
  browser: boolean;
  emailDueAt: Date | null;
};

/** Everyone who works where the conversation is: staff of its location, and staff of no location. */
const worksAt = (s: StaffMember, c: ConversationFacts) =>
  c.locationId === null || s.locationId === null || s.locationId === c.locationId;

function minutes(seconds: number | null): string {
  if (seconds === null) return '';
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

/** Who an event tells, of which kind, with which words; the actor's own staff member never. */
function addressees(
  e: LoggedEvent,
  ctx: Context,
): { staffIds: number[]; kind: EventNotificationKind; title: string; body: string } | null {
  const d = e.data;
  const conversation = e.conversationId === null ? undefined : ctx.conversations.get(e.conversationId);
  const message = e.messageId === null ? undefined : ctx.messages.get(e.messageId);
  const everyoneThere = (c: ConversationFacts) => [...ctx.staff.values()].filter((s) => worksAt(s, c)).map((s) => s.id);
  const actorName = e.actor.staff_id === undefined ? undefined : ctx.staff.get(e.actor.staff_id)?.name;
  switch (e.type) {
    case 'message.received': {
      if (!conversation || (d.message_type !== 'TEXT' && d.message_type !== 'EMAIL')) return null;
      const body = oneLine(message?.content);
      if (conversation.assignedStaffId !== null)
        return {
          staffIds: [conversation.assignedStaffId],
          kind: 'client_replied',
          title: `${conversation.clientLabel} wrote`,
          body,
        };
      return {
        staffIds: everyoneThere(conversation),
        kind: 'unassigned_waiting',
        title: `${conversation.clientLabel} is waiting (unassigned)`,
        body,
      };
    }
    case 'conversation.assigned': {
      if (!conversation || typeof d.staff_id !== 'number') return null;
      const by = d.by === 'auto' ? 'Auto-assignment' : (actorName ?? 'The API');
      return {
        staffIds: [d.staff_id],
        kind: 'assigned',
        title: `${by} assigned you ${conversation.clientLabel}`,
        body: '',
      };
    }
    case 'note.created': {
      if (!conversation || !Array.isArray(d.mentioned_staff_ids)) return null;
      return {
        staffIds: d.mentioned_staff_ids.filter((id): id is number => typeof id === 'number'),
        kind: 'mentioned',
        title: `${actorName ?? 'A colleague'} mentioned you (${conversation.clientLabel})`,
        body: oneLine(message?.content),
      };
    }
    case 'call.completed':
    case 'voicemail.received': {
      if (!conversation || d.direction !== 'inbound') return null;
      const voicemail = e.type === 'voicemail.received';
      if (!voicemail && message?.callOutcome !== 'missed') return null;
      const staffIds = conversation.assignedStaffId !== null ? [conversation.assignedStaffId] : everyoneThere(conversation);
      const length = minutes(typeof d.duration_seconds === 'number' ? d.duration_seconds : null);
      return {
        staffIds,
        kind: 'missed_call',
        title: `${voicemail ? 'Voicemail' : 'Missed call'} from ${conversation.clientLabel}`,
        body: voicemail && length ? `Voicemail, ${length}` : '',
      };
    }
    case 'webhook_endpoint.disabled':
      return {
        staffIds: [...ctx.staff.values()]
          .filter((s) => (STAFF_MANAGER_ROLES as readonly string[]).includes(s.role))
          .map((s) => s.id),
        kind: 'webhook_disabled',
        title: 'An outgoing webhook endpoint was switched off',
        body: oneLine(typeof d.reason === 'string' ? d.reason : ''),
      };
    default:
      return null;
  }
}

/**
 * The notifications an event makes: one per addressee who is an active staff member, is not who
 * acted, and wants it on some channel. Browser and email only when they are available (not away,
 * on shift); email only to staff with an address, due the business's delay after the event.
 */
export function plan(e: LoggedEvent, ctx: Context): Planned[] {
  const age = ctx.now.getTime() - e.occurredAt.getTime();
  if (age > STALE_MS) return [];
  const onTime = age <= LATE_MS;
  const who = addressees(e, ctx);
  if (!who) return [];
  const out: Planned[] = [];
  for (const staffId of new Set(who.staffIds)) {
    const member = ctx.staff.get(staffId);
    if (!member || staffId === e.actor.staff_id) continue;
    const choice = resolvePreferences(member.preferences)[who.kind];
    const browser = choice.browser && member.available && onTime;
    const email = choice.email && member.available && member.hasEmail && onTime;
    if (!choice.in_app && !browser && !email) continue;
    out.push({
      eventId: e.id,
      staffId,
      kind: who.kind,
      conversationId: e.conversationId,
      messageId: e.messageId,
      eventAt: e.occurredAt,
      title: cut(who.title, MAX_NOTIFICATION_TITLE),
      body: cut(who.body, MAX_NOTIFICATION_BODY),
      inApp: choice.in_app,
      browser,
      emailDueAt: email ? new Date(e.occurredAt.getTime() + ctx.emailDelayMinutes * 60_000) : null,
    });
  }
  return out;
}
