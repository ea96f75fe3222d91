import { sql } from 'drizzle-orm';
import { equalsAny } from '@/db/sql-array';
import type { Tx } from '@/server/db/client';
import { ASSIGNMENT_HANDLER } from '@/server/services/assignment/handler';
import type { EventHandler, LoggedEvent } from '@/server/services/events/dispatch';
import { staffAvailability } from '@/server/services/staff-availability';
import { DEFAULT_NOTIFICATION_EMAIL_DELAY_MINUTES } from '@/server/shared/notifications';
import { plan, type Context, type ConversationFacts, type MessageFacts, type Planned, type StaffMember } from './recipients';

/**
 * Staff notifications as a handler of the event log (docs/api.md#notifications): who is told of a
 * client's message, an assignment, a mention, a missed call or a webhook endpoint switched off is
 * decided here (./recipients.ts), never on the write paths. It runs behind auto-assignment (`after`),
 * so a conversation still unassigned when it reads the message is one assignment found nobody for
 * (or assignment is off), and its assignee, when there is one, is who hears.
 *
 * Writes in the dispatcher's transaction, folding into the staff member's unread row of the
 * conversation (db/schema/notifications.ts), and tells their live streams with one NOTIFY per row,
 * sent at commit (server/realtime/notifications.ts). Each event acts once: the events it takes are
 * marked (notification_events) in the same transaction, and one handed again (its cursor set back)
 * is passed over, whatever became of its notification since. Rows are written in (staff member,
 * conversation) order, the order "Mark all read" locks them in (./read.ts): neither waits for the
 * other in a cycle. A statement for the marks and one for the rows, whatever the batch's size; the
 * handful of reads per business concerned.
 */

export const NOTIFICATIONS_HANDLER = 'notifications';
export const NOTIFICATIONS_CHANNEL = 'inbox_notifications';

async function contextOf(businessId: number, events: LoggedEvent[], now: Date, tx: Tx): Promise<Context> {
  const conversationIds = [...new Set(events.flatMap((e) => (e.conversationId === null ? [] : [e.conversationId])))];
  const messageIds = [...new Set(events.flatMap((e) => (e.messageId === null ? [] : [e.messageId])))];
  const [availability, people, conversations, messages, [business]] = await Promise.all([
    staffAvailability(businessId, now, tx),
    tx.execute<{ id: number; role: string; has_email: boolean; preferences: StaffMember['preferences'] }>(sql`
      select id, role, coalesce(btrim(email), '') <> '' as has_email, notification_preferences as preferences
      from staff where business_id = ${businessId} and active`),
    conversationIds.length === 0
      ? []
      : tx.execute<{ id: number; assigned_staff_id: number | null; location_id: number | null; label: string }>(sql`
          select c.id, c.assigned_staff_id, c.location_id,
                 coalesce(nullif(btrim(cl.name), ''), cl.phone_number, cl.email, 'A client') as label
          from conversations c left join clients cl on cl.business_id = c.business_id and cl.id = c.client_id
          where c.business_id = ${businessId} and ${equalsAny(sql`c.id`, conversationIds, 'int')}`),
    messageIds.length === 0
      ? []
      : tx.execute<{ id: number; content: string | null; call_outcome: string | null; duration: number | null }>(sql`
          select id, left(content, 400) as content, call_outcome, call_duration_seconds as duration
          from messages where business_id = ${businessId} and ${equalsAny(sql`id`, messageIds, 'bigint')}`),
    tx.execute<{ delay: number | null }>(sql`
      select (settings->>'notification_email_delay_minutes')::int as delay from businesses where id = ${businessId}`),
  ]);
  const extra = new Map(people.map((p) => [p.id, p]));
  const staff = new Map<number, StaffMember>();
  for (const a of availability) {
    const p = extra.get(a.staffId);
    if (!p) continue;
    staff.set(a.staffId, {
      id: a.staffId,
      name: a.name,
      role: p.role,
      locationId: a.locationId,
      available: a.available,
      hasEmail: p.has_email,
      preferences: p.preferences,
    });
  }
  return {
    staff,
    conversations: new Map<number, ConversationFacts>(
      conversations.map((c) => [
        c.id,
        { id: c.id, assignedStaffId: c.assigned_staff_id, locationId: c.location_id, clientLabel: c.label },
      ]),
    ),
    messages: new Map<number, MessageFacts>(
      messages.map((m) => [m.id, { id: m.id, content: m.content, callOutcome: m.call_outcome, durationSeconds: m.duration }]),
    ),
    emailDelayMinutes: business?.delay ?? DEFAULT_NOTIFICATION_EMAIL_DELAY_MINUTES,
    now,
  };
}

type Folded = Planned & { businessId: number; count: number; replyAfter: Date };

/**
 * A batch's notifications folded per staff member and conversation, in event order (one INSERT …
 * ON CONFLICT cannot touch a row twice): the latest event's kind and words, the first planned
 * email's time, the count of events. What it is about (its message, and the time a reply answers it
 * from) follows the round of its email: while an email waits, an event without a message (the
 * conversation's assignment) keeps the client's text it follows; otherwise the event starts a new
 * round, and a conversation assigned again after it was answered is news again. writeNotifications
 * folds into a stored row by the same rule.
 */
function fold(planned: readonly (Planned & { businessId: number })[]): Folded[] {
  const out = new Map<string, Folded>();
  for (const p of planned) {
    const key = p.conversationId === null ? `e${p.eventId}:${p.staffId}` : `${p.staffId}:${p.conversationId}`;
    const before = out.get(key);
    out.set(
      key,
      before
        ? {
            ...p,
            count: before.count + 1,
            inApp: before.inApp || p.inApp,
            emailDueAt: before.emailDueAt ?? p.emailDueAt,
            messageId: before.emailDueAt && p.messageId === null ? before.messageId : p.messageId,
            replyAfter: before.emailDueAt && p.messageId === null ? before.replyAfter : p.eventAt,
          }
        : { ...p, count: 1, replyAfter: p.eventAt },
    );
  }
  return [...out.values()];
}

/** Writes (or folds in) the notifications and tells each one's staff member's streams, at commit. */
async function writeNotifications(rows: readonly Folded[], tx: Tx): Promise<number> {
  if (rows.length === 0) return 0;
  const payload = rows.map((r) => ({
    business_id: r.businessId,
    staff_id: r.staffId,
    kind: r.kind,
    conversation_id: r.conversationId,
    message_id: r.messageId,
    reply_after: r.replyAfter.toISOString(),
    event_id: r.eventId,
    count: r.count,
    title: r.title,
    body: r.body,
    in_app: r.inApp,
    browser: r.browser,
    email_due_at: r.emailDueAt?.toISOString() ?? null,
  }));
  // A pending email keeps its time (more messages do not put it off), and what it is about unless
  // the event brings a message (see fold); a new one is planned when the row has none pending. Rows
  // are taken in (staff member, conversation) order: the lock order.
  const written = await tx.execute<{ id: number }>(sql`
    with input as (
      select * from jsonb_to_recordset(${JSON.stringify(payload)}::jsonb) as r(
        business_id int, staff_id int, kind text, conversation_id int, message_id bigint, event_id bigint,
        reply_after timestamptz, count int, title text, body text, in_app boolean, browser boolean, email_due_at timestamptz)
    ), upserted as (
      insert into notifications as n (business_id, staff_id, kind, conversation_id, message_id, event_id, reply_after,
                                      count, title, body, in_app, browser, email_due_at, email_state)
      select business_id, staff_id, kind, conversation_id, message_id, event_id, reply_after, count, title, body, in_app, browser,
             email_due_at, case when email_due_at is null then null else 'pending' end
      from input order by staff_id, conversation_id
      on conflict (staff_id, conversation_id) where read_at is null and conversation_id is not null do update set
        kind = excluded.kind,
        message_id = case when n.email_state = 'pending' and excluded.message_id is null then n.message_id else excluded.message_id end,
        event_id = excluded.event_id,
        reply_after = case when n.email_state = 'pending' and excluded.message_id is null then n.reply_after else excluded.reply_after end,
        count = n.count + excluded.count,
        title = excluded.title,
        body = excluded.body,
        in_app = n.in_app or excluded.in_app,
        browser = excluded.browser,
        email_due_at = case when n.email_state = 'pending' or excluded.email_due_at is null then n.email_due_at else excluded.email_due_at end,
        email_state = case when n.email_state = 'pending' or excluded.email_due_at is null then n.email_state else 'pending' end,
        email_detail = case when n.email_state = 'pending' or excluded.email_due_at is null then n.email_detail else null end,
        updated_at = now()
      returning n.id, n.business_id, n.staff_id, n.kind, n.conversation_id, n.title, n.body, n.count, n.browser, n.in_app
    )
    select id, case when in_app or browser then pg_notify(${NOTIFICATIONS_CHANNEL}, json_build_object(
             'businessId', business_id, 'staffId', staff_id,
             'notification', json_build_object('id', id, 'kind', kind, 'conversationId', conversation_id, 'title', title,
                                               'body', body, 'count', count, 'browser', browser))::text) end
    from upserted`);
  return written.length;
}

/** The events not taken before (marked now, in the caller's transaction), in the order given. */
async function firstTaken(events: LoggedEvent[], tx: Tx): Promise<LoggedEvent[]> {
  if (events.length === 0) return [];
  const marked = await tx.execute<{ event_id: number }>(sql`
    insert into notification_events (event_id, business_id)
    select * from unnest(${sql.param(events.map((e) => e.id))}::bigint[], ${sql.param(events.map((e) => e.businessId))}::int[])
    on conflict do nothing
    returning event_id`);
  const fresh = new Set(marked.map((m) => Number(m.event_id)));
  return events.filter((e) => fresh.has(e.id));
}

export async function handleNotificationEvents(events: LoggedEvent[], now: Date, tx: Tx): Promise<number> {
  const byBusiness = new Map<number, LoggedEvent[]>();
  for (const e of await firstTaken(events, tx)) {
    const theirs = byBusiness.get(e.businessId);
    if (theirs) theirs.push(e);
    else byBusiness.set(e.businessId, [e]);
  }
  const planned: (Planned & { businessId: number })[] = [];
  for (const [businessId, theirs] of byBusiness) {
    const ctx = await contextOf(businessId, theirs, now, tx);
    for (const e of theirs) for (const p of plan(e, ctx)) planned.push({ ...p, businessId });
  }
  return writeNotifications(fold(planned), tx);
}

export const notificationsHandler: EventHandler = {
  name: NOTIFICATIONS_HANDLER,
  after: ASSIGNMENT_HANDLER,
  types: [
    'message.received',
    'conversation.assigned',
    'note.created',
    'call.completed',
    'voicemail.received',
    'webhook_endpoint.disabled',
  ],
  handle: async (events, tx) => void (await handleNotificationEvents(events, new Date(), tx)),
};
