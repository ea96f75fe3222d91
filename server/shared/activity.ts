/**
 * The timeline's activity lines (docs/architecture.md#event-log, docs/api.md#activity-lines): who
 * did what to a conversation, kept in `conversation_activities` by the event log's activity handler
 * (server/services/activity/handler.ts) and said in words here, for the inbox. Bundled for the
 * browser: type imports only.
 */

/** The event types that become activity lines. */
export const ACTIVITY_TYPES = [
  'conversation.assigned',
  'conversation.status_changed',
  'conversation.snoozed',
  'conversation.woke',
  'conversation.labeled',
  'client.opted_out',
  'client.opted_in',
  'consent.recorded',
] as const;
export type ActivityType = (typeof ACTIVITY_TYPES)[number];

/** One line as the inbox reads it: the stored event's type, actor and data, with the names it mentions. */
export type ActivityLine = {
  activity_id: number;
  event_id: number;
  type: ActivityType;
  occurred_at: string;
  /** The event's actor type (db/schema/enums.ts EVENT_ACTOR_TYPES; the server's rows are checked against this at compile time). */
  actor_type: 'staff' | 'client' | 'system' | 'api' | 'provider';
  actor_staff_id: number | null;
  /** The acting staff member's name (null: not a staff member, or no longer on the staff list). */
  actor_name: string | null;
  /** For an assignment: the assignee's and the previous assignee's names. */
  staff_name: string | null;
  previous_staff_name: string | null;
  /** The event's data (server/services/events/types.ts), as logged. */
  data: Record<string, unknown>;
};

/** A line in words: who (bold in the inbox), what they did, and the reason or note given, if any. */
export type ActivityWords = { who: string; what: string; note: string | null };

const CHANNEL_WORD: Record<string, string> = { sms: 'texts', email: 'email' };
const STATUS_VERB: Record<string, string> = {
  resolved: 'resolved the conversation',
  pending: 'marked the conversation pending',
  snoozed: 'snoozed the conversation',
};
const HOW_ASKED: Record<string, string> = {
  in_person: 'in person',
  phone_call: 'by phone',
  paper_form: 'on a paper form',
  web_form: 'on a web form',
  email: 'by email',
  text_message: 'by text',
  keyword: 'by reply keyword',
  import: 'by import',
  api: 'through the API',
  staff: 'to staff',
};

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const quote = (s: string) => `“${s}”`;

/** Who acted, as a person at the front desk says it. */
export function activityWho(line: Pick<ActivityLine, 'actor_type' | 'actor_name' | 'type' | 'data'>): string {
  switch (line.actor_type) {
    case 'staff':
      return line.actor_name ?? 'A former staff member';
    case 'client':
      return 'The client';
    case 'system':
      return 'Automatically';
    case 'api':
      return line.actor_name ? `${line.actor_name} (API)` : 'The API';
    case 'provider':
      return str(line.data.channel) === 'email' ? 'The email provider' : 'The carrier';
  }
}

/**
 * What the line says. `time` formats an ISO time for the reader (their clock and language), as a
 * snooze's end is shown.
 */
export function describeActivity(line: ActivityLine, time: (iso: string) => string): ActivityWords {
  const d = line.data;
  const who = activityWho(line);
  const words = (what: string, note: string | null = null): ActivityWords => ({ who, what, note });
  switch (line.type) {
    case 'conversation.assigned': {
      // Auto-assignment's (docs/api.md#auto-assignment): "Automatically assigned to Ana", or a hand-back.
      if (d.by === 'auto') {
        if (d.staff_id === null || d.staff_id === undefined)
          return words(`handed the conversation back from ${line.previous_staff_name ?? 'a former staff member'}, who is away`);
        return words(`assigned to ${line.staff_name ?? 'a former staff member'}`);
      }
      if (d.staff_id === null || d.staff_id === undefined)
        return words(line.previous_staff_name ? `unassigned ${line.previous_staff_name}` : 'unassigned the conversation');
      const to =
        line.actor_type === 'staff' && d.staff_id === line.actor_staff_id
          ? 'themselves'
          : (line.staff_name ?? 'a former staff member');
      return words(`assigned the conversation to ${to}`);
    }
    case 'conversation.status_changed': {
      const status = str(d.status) ?? '';
      const previous = str(d.previous_status);
      if (status === 'open') {
        const verb = previous === 'snoozed' ? 'woke the conversation' : 'reopened the conversation';
        return words(line.actor_type === 'client' ? `${verb} with a new message` : verb);
      }
      return words(STATUS_VERB[status] ?? `set the status to ${status}`);
    }
    case 'conversation.snoozed': {
      const until = str(d.snoozed_until);
      return words(until ? `snoozed the conversation until ${time(until)}` : 'snoozed the conversation');
    }
    case 'conversation.woke':
      return words('woke the conversation: its snooze ended');
    case 'conversation.labeled': {
      const label = str(d.label);
      const previous = str(d.previous_label);
      if (label === null) return words(previous ? `removed the label ${quote(previous)}` : 'removed the label');
      return words(previous ? `changed the label from ${quote(previous)} to ${quote(label)}` : `labeled it ${quote(label)}`);
    }
    case 'client.opted_out': {
      const what = CHANNEL_WORD[str(d.channel) ?? ''] ?? 'messages';
      const note = str(d.note);
      switch (d.source) {
        case 'keyword':
          return words(`opted out of ${what} with a reply keyword`, note);
        case 'provider_error':
          return words(
            d.channel === 'email'
              ? 'reported an unsubscribe, spam report or bounce: opted out of email'
              : 'reported the number unsubscribed: opted out of texts',
            note,
          );
        case 'import':
          return words(`opted the client out of ${what} by import`, note);
        default:
          return words(`opted the client out of ${what}`, note);
      }
    }
    case 'client.opted_in': {
      const what = CHANNEL_WORD[str(d.channel) ?? ''] ?? 'messages';
      const source = str(d.source) ?? '';
      if (source === 'keyword') return words(`opted back in to ${what} with a reply keyword`, str(d.note));
      const how = source === 'staff' || source === 'api' ? '' : ` (the client asked ${HOW_ASKED[source] ?? source})`;
      return words(`opted the client back in to ${what}${how}`, str(d.note));
    }
    case 'consent.recorded': {
      const what = CHANNEL_WORD[str(d.channel) ?? ''] ?? 'messages';
      const given = d.status === 'given' ? 'given' : 'withdrawn';
      const how = HOW_ASKED[str(d.source) ?? ''];
      return words(`recorded ${d.purpose} consent for ${what}: ${given}${how ? ` ${how}` : ''}`);
    }
  }
}
