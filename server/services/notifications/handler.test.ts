import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { toLoggedEvent, type EventRow, type LoggedEvent } from '@/server/services/events/dispatch';
import { markNotificationsRead } from '@/server/services/notifications/read';
import { assigningBusiness, newClientTexts, textIn } from '@/server/testing/assignment';
import { createStaff } from '@/server/testing/factories';
import { holder, lockWaiters, until, untilBlockedBy } from '@/server/testing/locks';
import { endpointSwitchedOff, notificationsFor, notificationsOf, settleNotifications } from '@/server/testing/notifications';
import { handleNotificationEvents, NOTIFICATIONS_HANDLER } from './handler';

/**
 * The notifications handler under replay and concurrency (docs/api.md#notifications): an event
 * handed again changes nothing, whatever became of its notification; two events for one staff
 * member and conversation written at once fold into one row; and the handler never deadlocks with
 * "Mark all read" (both lock a staff member's rows in conversation order).
 */

/** The business's events the notifications handler takes, after event `after`, in the log's order. */
async function loggedEvents(businessId: number, after = 0): Promise<LoggedEvent[]> {
  const rows = await db.execute<EventRow>(sql`
    select id, business_id, type, conversation_id, message_id, client_id, actor_type, actor_staff_id, data, occurred_at
    from events where business_id = ${businessId} and id > ${after}
      and type in ('message.received', 'conversation.assigned', 'note.created', 'webhook_endpoint.disabled')
    order by tx_id, id`);
  return rows.map(toLoggedEvent);
}

const lastEventId = async () =>
  Number((await db.execute<{ id: number }>(sql`select coalesce(max(id), 0)::bigint as id from events`))[0]!.id);

/** The handler's cursor, to set it back to (a replay). */
async function cursor() {
  const [c] = await db.execute<{ tx_id: string; event_id: number }>(sql`
    select tx_id::text, event_id from event_handler_cursors where handler = ${NOTIFICATIONS_HANDLER}`);
  return c!;
}

const handle = (events: LoggedEvent[]) => db.transaction((tx) => handleNotificationEvents(events, new Date(), tx));

describe('the notifications handler, handed an event again', () => {
  it('changes nothing: not an unread notification, not a read one, not one of no conversation', async () => {
    await settleNotifications();
    const before = await cursor();
    const b = await assigningBusiness({}, 2);
    const owner = await createStaff(b.businessId, { role: 'owner' });
    const { client } = await newClientTexts(b);
    await textIn(b, client, 'Also, parking?');
    await endpointSwitchedOff(b.businessId, 'Failing');
    await settleNotifications();
    const written = await notificationsOf(b.businessId);
    // Two staff told of the conversation (one row each, two texts), the owner of both.
    expect(written.map((r) => [r.kind, r.count])).toEqual(
      expect.arrayContaining([
        ['unassigned_waiting', 2],
        ['webhook_disabled', 1],
      ]),
    );
    expect(written).toHaveLength(4);

    // The cursor set back: every event of this test handed again.
    const replay = async () => {
      await db.execute(sql`
        update event_handler_cursors set tx_id = ${before.tx_id}::xid8, event_id = ${before.event_id}
        where handler = ${NOTIFICATIONS_HANDLER}`);
      await settleNotifications();
    };
    await replay();
    expect(await notificationsOf(b.businessId)).toEqual(written);

    // Read, then handed again: no new notification, nothing unread.
    for (const s of [...b.team, owner]) await markNotificationsRead(b.businessId, s.id, 'all');
    const read = await notificationsOf(b.businessId);
    await replay();
    expect(await notificationsOf(b.businessId)).toEqual(read);

    // What comes next is new: it is told.
    await textIn(b, client, 'Hello?');
    await settleNotifications();
    expect((await notificationsOf(b.businessId)).filter((r) => r.readAt === null)).toHaveLength(3);
  });
});

describe('the notifications handler, written at once', () => {
  it('two events for one staff member and conversation in two transactions fold into one row', async () => {
    const b = await assigningBusiness({}, 1);
    const mark = await lastEventId();
    const { client, conversationId } = await newClientTexts(b);
    await textIn(b, client, 'Second text');
    const [first, second] = await loggedEvents(b.businessId, mark);
    // Each in its own transaction, at once, the later one in the log first as often as not.
    await Promise.all([handle([second!]), handle([first!])]);
    const rows = await notificationsFor(b.businessId, b.team[0]!.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ conversationId, count: 2, readAt: null });
  });

  it('does not deadlock with "Mark all read": both take a staff member’s rows in conversation order', async () => {
    const b = await assigningBusiness({}, 1);
    const staffId = b.team[0]!.id;
    const texted = [];
    for (let i = 0; i < 3; i++) texted.push(await newClientTexts(b));
    await settleNotifications();
    const rows = await notificationsFor(b.businessId, staffId);
    const rowOf = (conversationId: number) => rows.find((r) => r.conversationId === conversationId)!;
    const [c1, c2, c3] = texted.map((t) => t.conversationId).sort((x, y) => x - y);

    // New texts in the first and the last conversation (the bell's oldest and newest rows).
    const mark = await lastEventId();
    const byConversation = new Map(texted.map((t) => [t.conversationId, t.client]));
    await textIn(b, byConversation.get(c1!)!, 'First conversation again');
    await textIn(b, byConversation.get(c3!)!, 'Third conversation again');
    const events = await loggedEvents(b.businessId, mark);
    expect(events.map((e) => e.conversationId)).toEqual([c1, c3]);

    // The middle row held by a writer in flight: "Mark all read" takes one end's row and waits for it.
    const middle = holder(sql`select id from notifications where id = ${rowOf(c2!).id} for update`);
    const pid = await middle.pid;
    const markAll = markNotificationsRead(b.businessId, staffId, 'all');
    await untilBlockedBy('"Mark all read" waits for the middle row', '%notifications%read_at%', pid);
    // The handler then writes the two conversations' rows.
    const handled = handle(events);
    await until('the handler waits for "Mark all read"', async () =>
      (await lockWaiters('%insert into notifications%')).some((w) => w.blockers.length > 0 && !w.blockers.includes(pid)),
    );
    middle.release();
    await middle.done;
    const results = await Promise.allSettled([markAll, handled]);
    expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok'))).toEqual(['ok', 'ok']);
    // Both texts came after the reading: each conversation's row is unread again.
    const after = await notificationsFor(b.businessId, staffId);
    expect(after.filter((r) => r.readAt === null).map((r) => r.conversationId)).toEqual(expect.arrayContaining([c1, c3]));
  });
});
