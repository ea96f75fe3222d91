import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { optIn, optOut } from '@/server/services/messages/suppression';
import { clientOptOutHistory, setClientOptOut } from '@/server/services/compliance/client-opt-outs';
import { recordConsent } from '@/server/services/compliance/consent';
import {
  assignConversation,
  labelConversation,
  setConversationStatus,
  wakeSnoozedConversations,
} from '@/server/services/conversations';
import { dispatchEvents, toLoggedEvent, type EventRow, type LoggedEvent } from '@/server/services/events/dispatch';
import { EVENT_HANDLERS } from '@/server/services/events/handlers';
import { createClient, createConversation, createSmsNumber, createStaff, createTenant } from '@/server/testing/factories';
import { settleActivity } from '@/server/testing/activity';
import { inboundSmsForm, postTwilio, TWILIO_PATHS } from '@/server/testing/webhooks';
import { ACTIVITY_TYPES, describeActivity } from '@/server/shared/activity';
import { conversationActivityHandler, writeActivityLines } from './handler';
import { conversationActivity } from './read';

/**
 * The timeline's activity lines (docs/architecture.md#event-log): the handler turns each change's
 * event into a durable line with its actor, once, in the conversations it concerns; the inbox reads
 * them, and knows when some are still to be written.
 */

/** A business's events from the log, as the dispatcher hands them to handlers. */
async function loggedEvents(businessId: number): Promise<LoggedEvent[]> {
  const rows = await db.execute<EventRow>(sql`select * from events where business_id = ${businessId} order by tx_id, id`);
  return rows.filter((r) => (ACTIVITY_TYPES as readonly string[]).includes(r.type)).map(toLoggedEvent);
}

/** The conversation's lines, oldest first, in words. */
async function sentences(conversation: { businessId: number; id: number; clientId: number }) {
  const { lines } = await conversationActivity(conversation, null);
  return lines.reverse().map((l) => {
    const w = describeActivity(l, (iso) => iso);
    return `${w.who} ${w.what}${w.note ? ` — ${w.note}` : ''}`;
  });
}

describe('the activity handler', () => {
  it('is registered with the event log, after outgoing webhooks', () => {
    expect(EVENT_HANDLERS.map((h) => h.name).slice(0, 2)).toEqual(['outgoing-webhooks', 'conversation-activity']);
    expect(conversationActivityHandler.types).toEqual(ACTIVITY_TYPES);
  });

  it('turns each conversation change into a line saying who did it, skipping the status half of a snooze and a wake-up', async () => {
    const t = await createTenant();
    const ben = await createStaff(t.business.id, { name: 'Ben Carter' });
    const client = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, client.id);
    const ref = { businessId: t.business.id, id: conv.id, clientId: client.id };
    const owner = t.owner.name;

    await assignConversation(t.business.id, conv.id, ben.id, t.owner.id);
    await assignConversation(t.business.id, conv.id, t.owner.id, t.owner.id);
    await assignConversation(t.business.id, conv.id, null, null); // an API key naming nobody
    await setConversationStatus(t.business.id, conv.id, { status: 'resolved' }, t.owner.id);
    await setConversationStatus(t.business.id, conv.id, { status: 'open' }, ben.id);
    await setConversationStatus(t.business.id, conv.id, { status: 'pending' }, t.owner.id);
    const until = new Date(Date.now() + 3_600_000);
    await setConversationStatus(t.business.id, conv.id, { status: 'snoozed', snoozed_until: until }, t.owner.id);
    await labelConversation(t.business.id, conv.id, 'VIP', ben.id);
    await labelConversation(t.business.id, conv.id, 'Color', ben.id);
    await labelConversation(t.business.id, conv.id, null, ben.id);
    // The snooze ends: the sweeper wakes it, as the system.
    await db.execute(sql`update conversations set snoozed_until = now() - interval '1 second' where id = ${conv.id}`);
    await wakeSnoozedConversations();

    await settleActivity(ref);
    expect(await sentences(ref)).toEqual([
      `${owner} assigned the conversation to Ben Carter`,
      `${owner} assigned the conversation to themselves`,
      `The API unassigned ${owner}`,
      `${owner} resolved the conversation`,
      'Ben Carter reopened the conversation',
      `${owner} marked the conversation pending`,
      `${owner} snoozed the conversation until ${until.toISOString()}`,
      'Ben Carter labeled it “VIP”',
      'Ben Carter changed the label from “VIP” to “Color”',
      'Ben Carter removed the label “Color”',
      'Automatically woke the conversation: its snooze ended',
    ]);
    const { lines } = await conversationActivity(ref, null);
    expect(lines.at(-1)).toMatchObject({
      type: 'conversation.assigned',
      actor_type: 'staff',
      actor_staff_id: t.owner.id,
      actor_name: owner,
      staff_name: 'Ben Carter',
      previous_staff_name: null,
      data: { conversation_id: conv.id, staff_id: ben.id, previous_staff_id: null, by: 'manual' },
    });
    expect(lines[0]).toMatchObject({ type: 'conversation.woke', actor_type: 'system', actor_staff_id: null, actor_name: null });
  });

  it('a client who writes into a resolved conversation reopens it, by their own hand', async () => {
    const t = await createTenant();
    const number = await createSmsNumber(t.business.id);
    const client = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, client.id, { status: 'resolved' });
    await postTwilio(TWILIO_PATHS.smsIncoming, inboundSmsForm(number.phoneNumber, client.phoneNumber!, 'One more question'));
    const ref = { businessId: t.business.id, id: conv.id, clientId: client.id };
    await settleActivity(ref);
    expect(await sentences(ref)).toEqual(['The client reopened the conversation with a new message']);
  });

  it('an opt-out goes to the conversation of every client at the address; the reason and the actor come with it', async () => {
    const t = await createTenant();
    const phone = '+12125550177';
    const mum = await createClient(t.business.id, { phoneNumber: phone });
    const son = await createClient(t.business.id, { phoneNumber: phone });
    const noConversation = await createClient(t.business.id, { phoneNumber: phone });
    const other = await createClient(t.business.id);
    const mumConv = await createConversation(t.business.id, mum.id);
    const sonConv = await createConversation(t.business.id, son.id);
    const otherConv = await createConversation(t.business.id, other.id);
    const target = { businessId: t.business.id, channel: 'sms' as const, address: phone };

    await db.transaction((tx) => optOut({ ...target, source: 'keyword' }, tx));
    await db.transaction((tx) =>
      optIn({ ...target, source: 'phone_call', staffId: t.owner.id, note: 'Called to get reminders' }, tx),
    );
    await setClientOptOut(
      t.business.id,
      son.id,
      'sms',
      true,
      { via: 'staff', staffId: t.owner.id },
      { note: 'Asked at the desk to stop' },
    );
    await recordConsent(
      t.business.id,
      mum.id,
      { channel: 'email', purpose: 'marketing', status: 'given', source: 'in_person' } as never,
      t.owner.id,
    );

    const mumRef = { businessId: t.business.id, id: mumConv.id, clientId: mum.id };
    const sonRef = { businessId: t.business.id, id: sonConv.id, clientId: son.id };
    await settleActivity(mumRef);
    await settleActivity(sonRef);
    const owner = t.owner.name;
    const shared = [
      'The client opted out of texts with a reply keyword',
      `${owner} opted the client back in to texts (the client asked by phone) — Called to get reminders`,
      `${owner} opted the client out of texts — Asked at the desk to stop`,
    ];
    expect(await sentences(sonRef)).toEqual(shared);
    expect(await sentences(mumRef)).toEqual([...shared, `${owner} recorded marketing consent for email: given in person`]);
    expect(await sentences({ businessId: t.business.id, id: otherConv.id, clientId: other.id })).toEqual([]);
    // A client with no conversation has no line anywhere; nothing else of the business got one.
    const [{ n }] = (await db.execute<{ n: number }>(
      sql`select count(*)::int as n from conversation_activities where business_id = ${t.business.id}`,
    )) as unknown as [{ n: number }];
    expect(n).toBe(shared.length * 2 + 1);
    expect(noConversation.id).toBeGreaterThan(0);
    // The opt-out's reason is kept in the history record, the source of the event's note.
    expect((await clientOptOutHistory(t.business.id, son.id)).history[0]).toMatchObject({
      action: 'opt_out',
      source: 'staff',
      staff_id: t.owner.id,
      note: 'Asked at the desk to stop',
    });
  });

  it('writes each event once: a second run over the same events adds nothing', async () => {
    const t = await createTenant();
    const client = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, client.id);
    await assignConversation(t.business.id, conv.id, t.owner.id, t.owner.id);
    await labelConversation(t.business.id, conv.id, 'VIP', t.owner.id);
    const events = await loggedEvents(t.business.id);
    expect(events.map((e) => e.type)).toEqual(['conversation.assigned', 'conversation.labeled']);
    const count = async () =>
      (
        await db.execute<{ n: number }>(
          sql`select count(*)::int as n from conversation_activities where conversation_id = ${conv.id}`,
        )
      )[0]!.n;
    // Whichever runs first (the worker's dispatcher in this file's database, or this), the lines are there once.
    await db.transaction((tx) => writeActivityLines(events, tx));
    expect(await count()).toBe(2);
    expect(await db.transaction((tx) => writeActivityLines(events, tx))).toBe(0);
    await settleActivity({ businessId: t.business.id, id: conv.id, clientId: client.id });
    expect(await count()).toBe(2);
  });

  it('a line rolled back with its batch is not there: the handler writes in the dispatcher’s transaction', async () => {
    const t = await createTenant();
    const client = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, client.id);
    await assignConversation(t.business.id, conv.id, t.owner.id, t.owner.id);
    const events = await loggedEvents(t.business.id);
    await expect(
      db.transaction(async (tx) => {
        await writeActivityLines(events, tx);
        throw new Error('the cursor could not move');
      }),
    ).rejects.toThrow('the cursor could not move');
    expect((await conversationActivity({ businessId: t.business.id, id: conv.id, clientId: client.id }, null)).lines).toEqual([]);
  });
});

describe('reading the lines (conversationActivity)', () => {
  it('never answers "nothing behind" without the line, even when the handler commits between its two reads', async () => {
    const t = await createTenant();
    const client = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, client.id);
    await assignConversation(t.business.id, conv.id, t.owner.id, t.owner.id);
    const written = async () =>
      (await db.execute(sql`select 1 from conversation_activities where conversation_id = ${conv.id}`)).length > 0;
    // The reader's connection, with the worker's handler committing right after its first statement.
    let reads = 0;
    const racing = {
      execute: async (query: Parameters<typeof db.execute>[0]) => {
        const rows = await db.execute(query);
        if (reads++ === 0)
          for (const deadline = Date.now() + 20_000; !(await written()) && Date.now() < deadline;) {
            await dispatchEvents(conversationActivityHandler);
            await new Promise((r) => setTimeout(r, 20));
          }
        return rows;
      },
    } as unknown as typeof db;
    const answer = await conversationActivity({ businessId: t.business.id, id: conv.id, clientId: client.id }, null, racing);
    expect(await written()).toBe(true);
    // Behind (read again soon) with or without the line is fine; "caught up" without it would leave the timeline short.
    expect(answer.behind || answer.lines.length === 1).toBe(true);
    expect(answer.lines.map((l) => l.type)).toEqual(['conversation.assigned']);
  });
});
