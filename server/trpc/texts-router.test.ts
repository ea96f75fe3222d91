import { and, eq, inArray, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { conversations, events, messages } from '@/db/schema';
import { createClient, createConversation, createMessage, createSmsNumber, createTenant } from '@/server/testing/factories';
import { sendJobsFor } from '@/server/testing/send-jobs';
import { searchMessages } from '@/server/services/search';
import { claimForSendingCtes } from '@/server/services/messages/lifecycle';
import { createContext } from './init';
import { createCaller } from './root';

/**
 * Fixing a text from the inbox (docs/api.md#retry, docs/api.md#send-later): Retry is a new attempt
 * of the same message, queued once however often it is asked for; Edit changes a scheduled text's
 * words and time while it waits, and nothing once it went. Both only within the caller's business.
 */

async function callerFor(token: string) {
  const req = new Request('http://localhost:3000/api/trpc/x', {
    method: 'POST',
    headers: { host: 'localhost:3000', cookie: `session=${token}`, origin: 'http://localhost:3000' },
  });
  return createCaller(await createContext({ req }));
}

async function setup() {
  const t = await createTenant();
  await createSmsNumber(t.business.id);
  const client = await createClient(t.business.id, { name: 'Ana Lima' });
  const conv = await createConversation(t.business.id, client.id);
  return { t, client, conv, trpc: await callerFor(t.sessionToken) };
}

const rowOf = async (id: number) => (await db.select().from(messages).where(eq(messages.id, id)))[0]!;
const eventsOf = (id: number) =>
  db
    .select({ type: events.type, actorType: events.actorType, actorStaffId: events.actorStaffId })
    .from(events)
    .where(
      and(eq(events.messageId, id), inArray(events.type, ['message.edited', 'message.rescheduled', 'message.status_updated'])),
    )
    .orderBy(events.id);

describe('inbox.retryMessage', () => {
  it('re-queues a failed text as a new attempt of the same message; a second Retry queues nothing more', async () => {
    const { t, conv, trpc } = await setup();
    const failed = await createMessage(conv, {
      status: 'failed',
      errorCode: '30003',
      errorMessage: 'Twilio error 30003: …',
      attempts: 1,
      content: 'See you at 3',
    });

    // Two staff members (or a double click) at once: one attempt queued.
    const results = await Promise.allSettled([
      trpc.inbox.retryMessage({ messageId: failed.id }),
      trpc.inbox.retryMessage({ messageId: failed.id }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({
      code: 'CONFLICT',
      message: expect.stringMatching(/^Not retried: (status changed meanwhile|status is queued)/),
    });

    const row = await rowOf(failed.id);
    expect(row).toMatchObject({ status: 'queued', attempts: 2, errorCode: null, errorMessage: null, content: 'See you at 3' });
    // The same message: no second one in the conversation.
    const inConversation = await db.select({ id: messages.id }).from(messages).where(eq(messages.conversationId, conv.id));
    expect(inConversation.map((m) => m.id)).toEqual([failed.id]);
    // One job, in the queue of single sends (it never waits behind a campaign).
    expect((await sendJobsFor([failed.id])).map((j) => j.name)).toEqual(['sms.send']);
    expect(await eventsOf(failed.id)).toEqual([{ type: 'message.status_updated', actorType: 'staff', actorStaffId: t.owner.id }]);
  });

  it('refuses what is not a failed outbound message, and another business’s message, changing nothing', async () => {
    const { conv, trpc } = await setup();
    const delivered = await createMessage(conv, { status: 'delivered' });
    await expect(trpc.inbox.retryMessage({ messageId: delivered.id })).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringMatching(/delivered/),
    });
    const other = await setup();
    const theirs = await createMessage(other.conv, { status: 'failed', errorCode: '30003' });
    await expect(trpc.inbox.retryMessage({ messageId: theirs.id })).rejects.toMatchObject({ code: 'UNPROCESSABLE_CONTENT' });
    expect(await rowOf(theirs.id)).toMatchObject({ status: 'failed', attempts: 0 });
    await expect(trpc.inbox.retryMessage({ messageId: 0 })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });
});

describe('inbox.editScheduled', () => {
  async function scheduledText(s: Awaited<ReturnType<typeof setup>>, message = 'Reminder: your visit is tomorrow at 10') {
    const sendAt = new Date(Date.now() + 2 * 3_600_000);
    const sent = await s.trpc.inbox.sendSms({ conversationId: s.conv.id, message, send_at: sendAt.toISOString() });
    return { id: sent.message_ids[0]!, sendAt };
  }

  it('changes the words and the time of the same message: segments, search and the list preview follow; events say who', async () => {
    const s = await setup();
    const { id, sendAt } = await scheduledText(s);
    const later = new Date(sendAt.getTime() + 24 * 3_600_000);
    const words = `Reminder: your visit moved to Friday at 11 ${'—'.repeat(80)}`;
    const edited = await s.trpc.inbox.editScheduled({ messageId: id, message: words, send_at: later.toISOString() });
    expect(edited.data).toMatchObject({
      message_id: id,
      message_status: 'scheduled',
      content: words,
      send_at: later.toISOString(),
    });

    const row = await rowOf(id);
    expect(row).toMatchObject({ content: words, encoding: 'UCS-2', segments: 2, status: 'scheduled', attempts: 1 });
    // The conversation previews the new words; search finds them, not the old ones.
    const [c] = await db.select().from(conversations).where(eq(conversations.id, s.conv.id));
    expect(c).toMatchObject({ lastMessageId: id, lastMessageContent: words });
    const search = (term: string) =>
      searchMessages({ businessId: s.t.business.id, term, includeNotes: true, page: 1, pageSize: 10 });
    expect((await search('moved to Friday')).messages.map((m) => m.message_id)).toEqual([id]);
    expect((await search('tomorrow at 10')).messages).toEqual([]);
    // A job after the new time; the first one will find a send_at still to come.
    expect((await sendJobsFor([id])).map((j) => j.name)).toEqual(['sms.send.later', 'sms.send.later']);
    expect(await eventsOf(id)).toEqual([
      { type: 'message.edited', actorType: 'staff', actorStaffId: s.t.owner.id },
      { type: 'message.rescheduled', actorType: 'staff', actorStaffId: s.t.owner.id },
    ]);

    // Words only, the same words again, or the same time: only what changed is written.
    await s.trpc.inbox.editScheduled({ messageId: id, message: 'Reminder: Friday at 11' });
    await s.trpc.inbox.editScheduled({ messageId: id, message: 'Reminder: Friday at 11', send_at: later.toISOString() });
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['message.edited', 'message.rescheduled', 'message.edited']);
    expect(await rowOf(id)).toMatchObject({ content: 'Reminder: Friday at 11', encoding: 'GSM-7', segments: 1 });
  });

  it('refuses bad input with the field, and a text that already went (the claim won) keeps what went', async () => {
    const s = await setup();
    const { id } = await scheduledText(s, 'Hi Ana, see you at 3');
    await expect(s.trpc.inbox.editScheduled({ messageId: id })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(s.trpc.inbox.editScheduled({ messageId: id, message: 'x'.repeat(1601) })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
    await expect(
      s.trpc.inbox.editScheduled({ messageId: id, send_at: new Date(Date.now() - 60_000).toISOString() }),
    ).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
    // A saved reply's variable left in would reach the client as written.
    await expect(s.trpc.inbox.editScheduled({ messageId: id, message: 'Hi {{client.first_name}}!' })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });

    // The worker claims it (its time came): an edit now is a 409 and changes nothing.
    await db.execute(sql`update messages set send_at = now() - interval '1 second' where id = ${id}`);
    await db.execute(sql`with ${claimForSendingCtes([{ id, attempts: null }])} select id from attempt`);
    expect((await rowOf(id)).status).toBe('sending');
    await expect(s.trpc.inbox.editScheduled({ messageId: id, message: 'Too late' })).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringMatching(/sending, not scheduled/),
    });
    expect((await rowOf(id)).content).toBe('Hi Ana, see you at 3');
  });

  it('an email’s words are not edited here (422 on message); another business’s message is not found', async () => {
    const s = await setup();
    const email = await createMessage(s.conv, {
      channel: 'email',
      messageType: 'EMAIL',
      subject: 'Your visit',
      status: 'scheduled',
      sendAt: new Date(Date.now() + 3_600_000),
      content: 'See you soon',
    });
    await expect(s.trpc.inbox.editScheduled({ messageId: email.id, message: 'New words' })).rejects.toMatchObject({
      code: 'UNPROCESSABLE_CONTENT',
    });
    expect((await rowOf(email.id)).content).toBe('See you soon');

    const other = await setup();
    const { id: theirs } = await scheduledText(other);
    await expect(s.trpc.inbox.editScheduled({ messageId: theirs, message: 'Mine now' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect((await rowOf(theirs)).content).toBe('Reminder: your visit is tomorrow at 10');
  });
});
