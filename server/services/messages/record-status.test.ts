import { eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { conversations, messages, type MessageStatus } from '@/db/schema';
import { touchConversations } from '@/server/services/conversations/activity';
import {
  createBusiness,
  createClient,
  createConversation,
  createMessage,
  createSmsNumber,
  createTenant,
} from '@/server/testing/factories';
import { sendJobsFor } from '@/server/testing/send-jobs';
import { api, jsonOf, locsOf } from '@/server/testing/http';
import { expectAccepted, messageCount, messageOf as rowOf } from '@/server/testing/messages';

/**
 * docs/api.md#record-mode, #status-updates-by-api, #monotonic-updates, #conversation-statuses; sms /
 * email / messages groups: `POST /businesses/{id}/sms/record`, `POST /businesses/{id}/sms/status`,
 * `POST /businesses/{id}/email/status` and `POST /messages/{business_id}`.
 */

async function tenant() {
  const t = await createTenant();
  const number = await createSmsNumber(t.business.id);
  const headers = { 'x-api-key': t.apiKey };
  const post = (path: string, body: unknown) => api.post(`/api/v1/businesses/${t.business.id}${path}`, { headers, body });
  /** `POST /messages/{business_id}`, the any-channel door. */
  const postAny = (body: unknown) => api.post(`/api/v1/messages/${t.business.id}`, { headers, body });
  return { ...t, number, headers, post, postAny };
}

/** pg-boss jobs (any queue, a job of their own or a bulk chunk) that carry one of these messages. */
const jobsFor = async (ids: number[]) =>
  (await sendJobsFor(ids)).map((j) => ({ name: j.name, message_id: String(j.message_id) }));

const conversationOf = async (id: number) => (await db.select().from(conversations).where(eq(conversations.id, id)))[0]!;
const sid = () => `SM${crypto.randomUUID().replaceAll('-', '')}`;

describe('POST /businesses/{id}/sms/record', () => {
  it('records an outbound SMS as sent with its provider id, and enqueues nothing', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const providerId = sid();
    const res = await t.post('/sms/record', {
      sender_type: 'staff',
      staff_id: t.owner.id,
      provider: 'twilio',
      messages: [
        { message: 'Your color appointment is confirmed for Friday 10am', client_id: c.id, provider_message_id: providerId },
      ],
    });
    const body = await expectAccepted(res);
    const row = await rowOf(body.message_ids[0]);
    expect(row).toMatchObject({
      status: 'sent',
      direction: 'outbound',
      channel: 'sms',
      messageType: 'TEXT',
      provider: 'twilio',
      providerMessageId: providerId,
      senderType: 'staff',
      staffId: t.owner.id,
      fromAddress: t.number.phoneNumber,
      toAddress: c.phoneNumber,
      isRead: true,
      attempts: 0,
      requestId: body.request_id,
      errorCode: null,
    });
    expect(await jobsFor(body.message_ids)).toEqual([]);
    // An outbound message is not unread.
    expect((await conversationOf(row.conversationId)).unreadCount).toBe(0);
  });

  it('never enqueues a job, for any item or direction, while the queue operation does (the check can see jobs)', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const recorded = await jsonOf(
      await t.post('/sms/record', {
        sender_type: 'staff',
        messages: [
          { message: 'outbound, default status', client_id: c.id },
          { message: 'outbound, initiated status given', client_id: c.id, status: 'initiated' },
          { message: 'inbound', client_id: c.id, direction: 'inbound' },
          { message: 'new lead', to_number: '+14155550142' },
        ],
      }),
    );
    expect(recorded.message_ids).toHaveLength(4);
    const rows = await db.select().from(messages).where(inArray(messages.id, recorded.message_ids)).orderBy(messages.id);
    // The item's status is used by record operations (docs/api.md#record-mode).
    expect(rows.map((r) => r.status)).toEqual(['sent', 'initiated', 'received', 'sent']);
    expect(await jobsFor(recorded.message_ids)).toEqual([]);

    const queued = await jsonOf(
      await t.post('/sms', { sender_type: 'staff', messages: [{ message: 'sent for real', client_id: c.id }] }),
    );
    expect(await jobsFor(queued.message_ids)).toEqual([{ name: 'sms.send', message_id: String(queued.message_ids[0]) }]);
  });

  it('records an inbound SMS as received from the client, adds one unread, and keeps an open conversation open', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, c.id, { unreadCount: 2 });
    const res = await t.post('/sms/record', {
      sender_type: 'client',
      messages: [{ message: 'Can I move to 3pm?', client_id: c.id, direction: 'inbound', provider_message_id: sid() }],
    });
    expect(res.status).toBe(200);
    const { message_ids } = await jsonOf(res);
    const row = await rowOf(message_ids[0]);
    expect(row).toMatchObject({
      status: 'received',
      direction: 'inbound',
      senderType: 'client',
      senderId: c.id,
      receiverType: 'staff',
      conversationId: conv.id,
      fromAddress: c.phoneNumber,
      toAddress: t.number.phoneNumber,
      isRead: false,
    });
    const after = await conversationOf(conv.id);
    expect(after).toMatchObject({
      unreadCount: 3,
      status: 'open',
      lastMessageId: row.id,
      lastChannel: 'sms',
      lastMessageContent: 'Can I move to 3pm?',
    });
  });

  it('the sender_type of the envelope does not make an inbound message staff-sent', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const { message_ids } = await jsonOf(
      await t.post('/sms/record', {
        sender_type: 'staff',
        staff_id: t.owner.id,
        messages: [{ message: 'Thanks!', client_id: c.id, direction: 'inbound' }],
      }),
    );
    expect(await rowOf(message_ids[0])).toMatchObject({ senderType: 'client', senderId: c.id, status: 'received' });
  });

  it('counts every inbound item of one request: two inbound + one outbound → unread + 2', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, c.id);
    const res = await t.post('/sms/record', {
      sender_type: 'client',
      messages: [
        { message: 'one', client_id: c.id, direction: 'inbound' },
        { message: 'two', client_id: c.id, direction: 'inbound' },
        { message: 'reply', client_id: c.id, direction: 'outbound' },
      ],
    });
    expect(res.status).toBe(200);
    expect((await conversationOf(conv.id)).unreadCount).toBe(2);
  });

  it('an inbound SMS reopens a resolved conversation', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, c.id, { status: 'resolved', resolvedByStaffId: t.owner.id });
    const res = await t.post('/sms/record', {
      sender_type: 'client',
      messages: [{ message: 'One more question', client_id: c.id, direction: 'inbound' }],
    });
    expect(res.status).toBe(200);
    expect(await conversationOf(conv.id)).toMatchObject({ status: 'open', unreadCount: 1 });
  });

  it('an inbound SMS reopens a snoozed conversation and clears snoozed_until', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, c.id, {
      status: 'snoozed',
      snoozedUntil: new Date(Date.now() + 86_400_000),
    });
    const res = await t.post('/sms/record', {
      sender_type: 'client',
      messages: [{ message: 'Are you open Sunday?', client_id: c.id, direction: 'inbound' }],
    });
    expect(res.status).toBe(200);
    expect(await conversationOf(conv.id)).toMatchObject({ status: 'open', snoozedUntil: null, unreadCount: 1 });
  });

  it('an outbound record does not reopen a resolved or snoozed conversation, nor add unread', async () => {
    const t = await tenant();
    const a = await createClient(t.business.id);
    const b = await createClient(t.business.id);
    const until = new Date(Date.now() + 86_400_000);
    const resolved = await createConversation(t.business.id, a.id, { status: 'resolved' });
    const snoozed = await createConversation(t.business.id, b.id, { status: 'snoozed', snoozedUntil: until });
    const res = await t.post('/sms/record', {
      sender_type: 'staff',
      messages: [
        { message: 'See you then', client_id: a.id },
        { message: 'See you then', client_id: b.id },
      ],
    });
    expect(res.status).toBe(200);
    expect(await conversationOf(resolved.id)).toMatchObject({ status: 'resolved', unreadCount: 0 });
    const s = await conversationOf(snoozed.id);
    expect(s).toMatchObject({ status: 'snoozed', unreadCount: 0 });
    expect(s.snoozedUntil?.getTime()).toBe(until.getTime());
  });

  it('notes are never counted as unread, even an inbound-looking unread note written with an inbound SMS', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, c.id, { unreadCount: 1 });
    const unreadNote = {
      messageType: 'NOTE',
      channel: null,
      direction: 'inbound',
      isRead: false,
      senderType: 'staff',
      provider: null,
      providerMessageId: null,
    } as const;
    // A note already in the conversation changes nothing when a message is recorded.
    await createMessage(conv, unreadNote);
    await t.post('/sms/record', {
      sender_type: 'client',
      messages: [{ message: 'hello', client_id: c.id, direction: 'inbound' }],
    });
    expect((await conversationOf(conv.id)).unreadCount).toBe(2);
    // Touched together with an inbound SMS: the note is still not counted.
    await db.transaction(async (tx) => {
      const note = await createMessage(conv, unreadNote, tx);
      const sms = await createMessage(
        conv,
        { direction: 'inbound', isRead: false, senderType: 'client', status: 'received' },
        tx,
      );
      await touchConversations([note, sms], tx);
    });
    expect((await conversationOf(conv.id)).unreadCount).toBe(3);
  });

  /** Records twice with one twilio provider id: first alone, then again (or twice in one request). */
  async function duplicateProviderId(inOneRequest: boolean) {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const providerId = sid();
    const item = (message: string) => ({ message, client_id: c.id, provider_message_id: providerId });
    const envelope = { sender_type: 'staff', provider: 'twilio' };
    if (inOneRequest) {
      const res = await t.post('/sms/record', { ...envelope, messages: [item('a'), item('b')] });
      return {
        res,
        stored: await db.select().from(messages).where(eq(messages.providerMessageId, providerId)),
        expectedStored: 0,
      };
    }
    expect((await t.post('/sms/record', { ...envelope, messages: [item('first')] })).status).toBe(200);
    const res = await t.post('/sms/record', { ...envelope, messages: [item('second')] });
    return { res, stored: await db.select().from(messages).where(eq(messages.providerMessageId, providerId)), expectedStored: 1 };
  }

  it.each([false, true])(
    'a duplicate provider_message_id (same provider) is refused and nothing new is stored (in one request: %s)',
    async (inOne) => {
      const { res, stored, expectedStored } = await duplicateProviderId(inOne);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(stored).toHaveLength(expectedStored);
      if (expectedStored === 1) expect(stored[0]!.content).toBe('first');
    },
  );

  it.each([false, true])('a duplicate provider_message_id (same provider) answers 409 (in one request: %s)', async (inOne) => {
    const { res } = await duplicateProviderId(inOne);
    expect(res.status).toBe(409);
    expect(await jsonOf(res)).toEqual({ detail: expect.stringMatching(/provider_message_id/) });
  });

  it('the same provider id under another provider is a different message (200)', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const providerId = sid();
    const mk = (provider: string) => ({
      sender_type: 'staff',
      provider,
      messages: [{ message: 'x', client_id: c.id, provider_message_id: providerId }],
    });
    expect((await t.post('/sms/record', mk('twilio'))).status).toBe(200);
    expect((await t.post('/sms/record', mk('sandbox'))).status).toBe(200);
  });

  // docs/api.md#status-ranks (inbound messages are `received` and stay so): an inbound item's status is ignored.
  it('an inbound record item is stored received whatever recordable status it names; a status no record may name is a 422', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const res = await t.post('/sms/record', {
      sender_type: 'client',
      messages: [{ message: 'hi', client_id: c.id, direction: 'inbound', status: 'failed' }],
    });
    expect(res.status).toBe(200);
    expect((await rowOf((await jsonOf(res)).message_ids[0])).status).toBe('received');
    const ringing = await t.post('/sms/record', {
      sender_type: 'client',
      messages: [{ message: 'hi', client_id: c.id, direction: 'inbound', status: 'ringing' }],
    });
    expect(ringing.status).toBe(422);
    expect(await locsOf(ringing)).toEqual([['body', 'messages', 0, 'status']]);
  });

  it('validates record items: direction enum, message required, call statuses refused for outbound', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    expect(
      await locsOf(
        await t.post('/sms/record', {
          sender_type: 'client',
          messages: [{ message: 'x', client_id: c.id, direction: 'sideways' }],
        }),
      ),
    ).toEqual([['body', 'messages', 0, 'direction']]);
    expect(await locsOf(await t.post('/sms/record', { sender_type: 'staff', messages: [{ client_id: c.id }] }))).toEqual([
      ['body', 'messages', 0, 'message'],
    ]);
    expect(
      await locsOf(
        await t.post('/sms/record', { sender_type: 'staff', messages: [{ message: 'x', client_id: c.id, status: 'ringing' }] }),
      ),
    ).toEqual([['body', 'messages', 0, 'status']]);
  });
});

// ---------------------------------------------------------------------------------------------

const RANK: Record<string, number> = {
  initiated: 0,
  queued: 1,
  sending: 2,
  sent: 3,
  delivered: 4,
  undelivered: 4,
  failed: 4,
  bounced: 4,
  canceled: 4,
  read: 5,
};

function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]));
}

/** Records outbound SMS with the given statuses (and a twilio provider id each); returns their rows. */
async function recordOutbound(t: Awaited<ReturnType<typeof tenant>>, statuses: MessageStatus[]) {
  const c = await createClient(t.business.id);
  const res = await t.post('/sms/record', {
    sender_type: 'staff',
    provider: 'twilio',
    messages: statuses.map((status, i) => ({ message: `m${i}`, client_id: c.id, status, provider_message_id: sid() })),
  });
  expect(res.status).toBe(200);
  const { message_ids } = await jsonOf(res);
  return db.select().from(messages).where(inArray(messages.id, message_ids)).orderBy(messages.id);
}

/** Posts one SMS status update and checks it is accepted (200, success) with `updated` rows changed. */
async function expectSmsStatus(t: Awaited<ReturnType<typeof tenant>>, update: Record<string, unknown>, updated: 0 | 1) {
  const res = await t.post('/sms/status', update);
  expect(res.status).toBe(200);
  expect(await jsonOf(res)).toMatchObject({ success: true, updated });
}

describe('POST /businesses/{id}/sms/status (docs/api.md#monotonic-updates)', () => {
  it('all 24 orders of initiated/sent/delivered/read end read; each step applies exactly when it ranks higher', async () => {
    const t = await tenant();
    const orders = permutations<MessageStatus>(['initiated', 'sent', 'delivered', 'read']);
    expect(orders).toHaveLength(24);
    expect(new Set(orders.map((o) => o.join())).size).toBe(24);
    const rows = await recordOutbound(
      t,
      orders.map(() => 'initiated'),
    );
    expect(rows.map((r) => r.status)).toEqual(orders.map(() => 'initiated'));

    await Promise.all(
      orders.map(async (order, i) => {
        const row = rows[i]!;
        // Half by our id, half by the provider's.
        const target = i % 2 === 0 ? { message_id: row.id } : { provider_message_id: row.providerMessageId };
        let best = RANK.initiated!;
        const seen: number[] = [];
        for (const status of order) {
          const res = await t.post('/sms/status', { ...target, status });
          expect(res.status).toBe(200);
          const body = await jsonOf(res);
          expect(body.success).toBe(true);
          seen.push(body.updated);
          const expected = RANK[status]! > best ? 1 : 0;
          best = Math.max(best, RANK[status]!);
          expect(body.updated, `order ${order.join('→')} at ${status}`).toBe(expected);
        }
        expect(seen.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
      }),
    );
    const after = await db
      .select()
      .from(messages)
      .where(
        inArray(
          messages.id,
          rows.map((r) => r.id),
        ),
      );
    expect(after.map((r) => r.status)).toEqual(rows.map(() => 'read'));
    expect(after.every((r) => r.errorCode === null && r.errorMessage === null)).toBe(true);
  });

  it('undelivered after sent applies and keeps error_code and error_message; a later delivered does not override it', async () => {
    const t = await tenant();
    const [row] = await recordOutbound(t, ['sent']);
    await expectSmsStatus(
      t,
      { message_id: row!.id, status: 'undelivered', error_code: '30003', error_message: 'Unreachable destination handset' },
      1,
    );
    expect(await rowOf(row!.id)).toMatchObject({
      status: 'undelivered',
      errorCode: '30003',
      errorMessage: 'Unreachable destination handset',
    });
    const late = await jsonOf(await t.post('/sms/status', { message_id: row!.id, status: 'delivered' }));
    expect(late).toMatchObject({ success: true, updated: 0 });
    expect(await rowOf(row!.id)).toMatchObject({ status: 'undelivered', errorCode: '30003' });
  });

  it('failed after delivered is accepted with updated 0; the message stays delivered with no error', async () => {
    const t = await tenant();
    const [row] = await recordOutbound(t, ['delivered']);
    await expectSmsStatus(
      t,
      { provider_message_id: row!.providerMessageId, status: 'failed', error_code: '30008', error_message: 'Unknown error' },
      0,
    );
    expect(await rowOf(row!.id)).toMatchObject({ status: 'delivered', errorCode: null, errorMessage: null });
  });

  it('read after delivered applies (rank 5 > 4)', async () => {
    const t = await tenant();
    const [row] = await recordOutbound(t, ['delivered']);
    expect(await jsonOf(await t.post('/sms/status', { message_id: row!.id, status: 'read' }))).toMatchObject({
      success: true,
      updated: 1,
    });
    expect((await rowOf(row!.id)).status).toBe('read');
    // And nothing moves it afterwards.
    expect(await jsonOf(await t.post('/sms/status', { message_id: row!.id, status: 'failed' }))).toMatchObject({ updated: 0 });
    expect((await rowOf(row!.id)).status).toBe('read');
  });

  it('initiated after sent is accepted and ignored (updated 0); a duplicate of the current status too', async () => {
    const t = await tenant();
    const [row] = await recordOutbound(t, ['sent']);
    const before = await rowOf(row!.id);
    expect(await jsonOf(await t.post('/sms/status', { message_id: row!.id, status: 'initiated' }))).toMatchObject({
      success: true,
      updated: 0,
    });
    expect(await jsonOf(await t.post('/sms/status', { message_id: row!.id, status: 'sent' }))).toMatchObject({
      success: true,
      updated: 0,
    });
    const after = await rowOf(row!.id);
    expect(after.status).toBe('sent');
    expect(after.statusUpdatedAt.getTime()).toBe(before.statusUpdatedAt.getTime());
  });

  it('an inbound (received) message is never moved by a status update', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const { message_ids } = await jsonOf(
      await t.post('/sms/record', {
        sender_type: 'client',
        messages: [{ message: 'hi', client_id: c.id, direction: 'inbound' }],
      }),
    );
    for (const status of ['delivered', 'read', 'failed']) {
      expect(await jsonOf(await t.post('/sms/status', { message_id: message_ids[0], status }))).toMatchObject({ updated: 0 });
    }
    expect((await rowOf(message_ids[0])).status).toBe('received');
  });

  it('merges provider_metadata into the stored metadata when the status applies', async () => {
    const t = await tenant();
    const [row] = await recordOutbound(t, ['sent']);
    const res = await t.post('/sms/status', {
      message_id: row!.id,
      status: 'delivered',
      provider_metadata: { price: '-0.0079', carrier: 'Verizon' },
    });
    expect(await jsonOf(res)).toMatchObject({ updated: 1 });
    expect((await rowOf(row!.id)).providerMetadata).toMatchObject({ price: '-0.0079', carrier: 'Verizon' });
  });

  it('a call status (ringing) is a 422 at body.status', async () => {
    const t = await tenant();
    const [row] = await recordOutbound(t, ['sent']);
    for (const status of ['ringing', 'in_progress', 'completed', 'received']) {
      const res = await t.post('/sms/status', { message_id: row!.id, status });
      expect(res.status).toBe(422);
      expect(await locsOf(res)).toEqual([['body', 'status']]);
    }
    expect(await locsOf(await t.post('/sms/status', { message_id: row!.id, status: 'teleported' }))).toEqual([
      ['body', 'status'],
    ]);
    expect((await rowOf(row!.id)).status).toBe('sent');
  });

  it('neither message_id nor provider_message_id is a 422', async () => {
    const t = await tenant();
    const res = await t.post('/sms/status', { status: 'delivered' });
    expect(res.status).toBe(422);
    expect(await locsOf(res)).toEqual([['body', 'message_id']]);
  });

  it('an unknown message_id is a 422 at body.message_id; an unknown provider id at body.provider_message_id', async () => {
    const t = await tenant();
    const byId = await t.post('/sms/status', { message_id: 2_000_000_000, status: 'delivered' });
    expect(byId.status).toBe(422);
    expect(await locsOf(byId)).toEqual([['body', 'message_id']]);
    const byProvider = await t.post('/sms/status', { provider_message_id: sid(), status: 'delivered' });
    expect(byProvider.status).toBe(422);
    expect(await locsOf(byProvider)).toEqual([['body', 'provider_message_id']]);
  });

  it("another business's message (by id or provider id) is a 422 and is never touched", async () => {
    const mine = await tenant();
    const other = await tenant();
    const [theirs] = await recordOutbound(other, ['sent']);
    const byId = await mine.post('/sms/status', { message_id: theirs!.id, status: 'delivered' });
    expect(byId.status).toBe(422);
    expect(await locsOf(byId)).toEqual([['body', 'message_id']]);
    const byProvider = await mine.post('/sms/status', {
      provider_message_id: theirs!.providerMessageId,
      status: 'failed',
      error_code: 'x',
    });
    expect(byProvider.status).toBe(422);
    const after = await rowOf(theirs!.id);
    expect(after).toMatchObject({ status: 'sent', errorCode: null });
    expect(after.statusUpdatedAt.getTime()).toBe(theirs!.statusUpdatedAt.getTime());
    // A business key may not use the other business's path at all.
    expect(
      (
        await api.post(`/api/v1/businesses/${other.business.id}/sms/status`, {
          headers: mine.headers,
          body: { message_id: theirs!.id, status: 'delivered' },
        })
      ).status,
    ).toBe(403);
  });

  it('the email status endpoint refuses an SMS message (422) and the SMS endpoint an email', async () => {
    const t = await tenant();
    const [sms] = await recordOutbound(t, ['sent']);
    const res = await t.post('/email/status', { message_id: sms!.id, status: 'delivered' });
    expect(res.status).toBe(422);
    expect(await locsOf(res)).toEqual([['body', 'message_id']]);
    expect((await t.post('/email/status', { provider_message_id: sms!.providerMessageId, status: 'delivered' })).status).toBe(
      422,
    );
    expect((await rowOf(sms!.id)).status).toBe('sent');

    const c = await createClient(t.business.id);
    const email = await jsonOf(
      await t.post('/email/record', { sender_type: 'staff', messages: [{ subject: 'Hi', message: 'Body', client_id: c.id }] }),
    );
    const wrongDoor = await t.post('/sms/status', { message_id: email.message_ids[0], status: 'delivered' });
    expect(wrongDoor.status).toBe(422);
    expect(await jsonOf(await t.post('/email/status', { message_id: email.message_ids[0], status: 'delivered' }))).toMatchObject({
      updated: 1,
    });
  });

  it('by provider_message_id, each endpoint finds the message of its own channel when another channel shares the id', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const shared = `shared-${sid()}`;
    const email = await jsonOf(
      await t.post('/email/record', {
        sender_type: 'staff',
        provider: 'sendgrid',
        messages: [{ subject: 's', message: 'x', client_id: c.id, provider_message_id: shared }],
      }),
    );
    const sms = await jsonOf(
      await t.post('/sms/record', {
        sender_type: 'staff',
        provider: 'twilio',
        messages: [{ message: 'x', client_id: c.id, provider_message_id: shared }],
      }),
    );
    const smsRes = await t.post('/sms/status', { provider_message_id: shared, status: 'delivered' });
    const emailRes = await t.post('/email/status', { provider_message_id: shared, status: 'read' });
    expect([smsRes.status, emailRes.status]).toEqual([200, 200]);
    expect((await rowOf(sms.message_ids[0])).status).toBe('delivered');
    expect((await rowOf(email.message_ids[0])).status).toBe('read');
  });
});

describe('POST /messages/{business_id} (any channel, send or record)', () => {
  type Tenant = Awaited<ReturnType<typeof tenant>>;
  /** Each case: the body's own fields, what each item's stored row matches, the jobs it enqueues. */
  it.each<{
    name: string;
    body: (clientId: number) => Record<string, unknown>;
    rows: (t: Tenant) => Record<string, unknown>[];
    jobs: string[];
  }>([
    {
      name: 'channel sms + mode send queues an SMS with its sms.send job',
      body: (clientId) => ({
        channel: 'sms',
        mode: 'send',
        messages: [{ message: 'Hi from the any-channel door', client_id: clientId }],
      }),
      rows: (t) => [{ channel: 'sms', messageType: 'TEXT', status: 'queued', attempts: 1, fromAddress: t.number.phoneNumber }],
      jobs: ['sms.send'],
    },
    {
      name: 'channel sms + mode record records without a job (inbound too)',
      body: (clientId) => ({
        channel: 'sms',
        mode: 'record',
        provider: 'twilio',
        messages: [
          { message: 'out', client_id: clientId, provider_message_id: sid() },
          { message: 'in', client_id: clientId, direction: 'inbound' },
        ],
      }),
      rows: () => [{ status: 'sent' }, { status: 'received' }],
      jobs: [],
    },
    {
      name: 'channel email + mode send queues an email with its email.send job',
      body: (clientId) => ({
        channel: 'email',
        mode: 'send',
        messages: [{ subject: 'Your receipt', message: 'Thanks for visiting', client_id: clientId }],
      }),
      rows: (t) => [
        {
          channel: 'email',
          messageType: 'EMAIL',
          status: 'queued',
          subject: 'Your receipt',
          fromAddress: t.business.fromEmail,
        },
      ],
      jobs: ['email.send'],
    },
    {
      name: 'channel email + mode record records without a job',
      body: (clientId) => ({
        channel: 'email',
        mode: 'record',
        messages: [{ subject: 'Re: hours', message: 'We open at 9', client_id: clientId }],
      }),
      rows: () => [{ channel: 'email', status: 'sent', subject: 'Re: hours' }],
      jobs: [],
    },
  ])('$name', async ({ body, rows, jobs }) => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const res = await t.postAny({ sender_type: 'staff', ...body(c.id) });
    expect(res.status).toBe(200);
    const { message_ids } = await jsonOf(res);
    const expected = rows(t);
    expect(message_ids).toHaveLength(expected.length);
    for (const [i, row] of expected.entries()) expect(await rowOf(message_ids[i])).toMatchObject(row);
    expect((await jobsFor(message_ids)).map((j) => j.name)).toEqual(jobs);
  });

  it('a bad channel or mode is a 422 with its loc, and nothing is stored', async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const before = await messageCount(t.business.id);
    for (const channel of ['voice', 'fax', 7]) {
      const res = await t.postAny({ channel, mode: 'send', sender_type: 'staff', messages: [{ message: 'x', client_id: c.id }] });
      expect(res.status).toBe(422);
      expect(await locsOf(res)).toEqual([['body', 'channel']]);
    }
    const noChannel = await t.postAny({ mode: 'send', sender_type: 'staff', messages: [{ message: 'x', client_id: c.id }] });
    expect(await locsOf(noChannel)).toEqual([['body', 'channel']]);
    const badMode = await t.postAny({
      channel: 'sms',
      mode: 'draft',
      sender_type: 'staff',
      messages: [{ message: 'x', client_id: c.id }],
    });
    expect(badMode.status).toBe(422);
    expect(await locsOf(badMode)).toEqual([['body', 'mode']]);
    const after = await messageCount(t.business.id);
    expect(after).toBe(before);
  });

  it("validates the chosen operation's body: an email without subject is a 422 at messages[0].subject", async () => {
    const t = await tenant();
    const c = await createClient(t.business.id);
    const res = await t.postAny({
      channel: 'email',
      mode: 'send',
      sender_type: 'staff',
      messages: [{ message: 'no subject', client_id: c.id }],
    });
    expect(res.status).toBe(422);
    expect(await locsOf(res)).toEqual([['body', 'messages', 0, 'subject']]);
  });

  it('checks tenancy: a business key on another business is 403', async () => {
    const t = await tenant();
    const other = await createBusiness();
    const res = await api.post(`/api/v1/messages/${other.id}`, {
      headers: t.headers,
      body: { channel: 'sms', mode: 'send', sender_type: 'staff', messages: [{ message: 'x', to_number: '+14155550100' }] },
    });
    expect(res.status).toBe(403);
  });
});
