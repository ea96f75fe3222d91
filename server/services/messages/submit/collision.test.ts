import { TRPCError } from '@trpc/server';
import { desc, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { messages } from '@/db/schema';
import { issueSession } from '@/server/services/auth';
import { addNote } from '@/server/services/conversations/messages';
import { createClient, createConversation, createMessage, createSmsNumber, createStaff } from '@/server/testing/factories';
import { locs, postJson, restTenant, type RestTenant } from '@/server/testing/http';
import { staffCaller } from '@/server/testing/trpc';
import { inboundSmsForm, postTwilio, TWILIO_PATHS } from '@/server/testing/webhooks';

/**
 * The collision guard (docs/api.md#collision-guard), through the REST queue operations and the
 * inbox's tRPC sends: what holds a send (a client message, another sender's reply), what does not
 * (notes, automatic answers, texts written for later, the sender's own replies, a request without
 * the field), its 422s, and two simultaneous sends that saw the same message.
 */

let t: RestTenant;
let number: string;
let colleague: { id: number; token: string };
beforeAll(async () => {
  t = await restTenant();
  number = (await createSmsNumber(t.business.id)).phoneNumber;
  const staff = await createStaff(t.business.id, { name: 'Ana' });
  const session = await issueSession({ kind: 'platform', scope: 'test' }, { business_id: t.business.id, staff_id: staff.id });
  colleague = { id: staff.id, token: session.token };
});

let n = 0;
/** A client with a conversation holding one text of ours; answers the conversation and that text's id. */
async function conversationWithText() {
  const client = await createClient(t.business.id, {
    phoneNumber: `+1415${String(4_300_000 + n)}`,
    email: `client${n++}@example.test`,
  });
  const conversation = await createConversation(t.business.id, client.id);
  const sent = await sendSms(client.id, {});
  expect(sent.status).toBe(200);
  return { client, conversation, seen: sent.body.message_ids[0] as number };
}
const sendSms = (clientId: number, extra: Record<string, unknown>) =>
  postJson(`${t.base}/sms`, t.key, {
    sender_type: 'staff',
    messages: [{ client_id: clientId, message: 'See you at 3' }],
    ...extra,
  });
const clientTexts = (phone: string) => postTwilio(TWILIO_PATHS.smsIncoming, inboundSmsForm(number, phone, 'Can I come at 4?'));
const newestId = async (clientId: number) =>
  (
    await db.select({ id: messages.id }).from(messages).where(eq(messages.clientId, clientId)).orderBy(desc(messages.id)).limit(1)
  )[0]!.id;

/** The tRPC error a call threw (a 409's new ids are in `fields`, as the inbox reads them). */
async function trpcError(call: Promise<unknown>) {
  const err = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TRPCError);
  return err as TRPCError & { cause: { extra: { fields?: { new_message_ids: number[] } } } };
}

describe('collision guard over REST', () => {
  it('holds a send after a client message, lists it, and sends once the caller has seen it', async () => {
    const { client, seen } = await conversationWithText();
    expect((await clientTexts(client.phoneNumber!)).status).toBe(200);
    const inbound = await newestId(client.id);

    const held = await sendSms(client.id, { last_seen_message_id: seen });
    expect(held.status).toBe(409);
    expect(held.body.new_message_ids).toEqual([inbound]);
    expect(held.body.detail).toMatch(/1 new message .*1 from the client/);
    // Nothing was stored.
    expect(await newestId(client.id)).toBe(inbound);

    const sent = await sendSms(client.id, { last_seen_message_id: inbound });
    expect(sent.status).toBe(200);
  });

  it('leaves a request without the field as it was', async () => {
    const { client } = await conversationWithText();
    await clientTexts(client.phoneNumber!);
    expect((await sendSms(client.id, {})).status).toBe(200);
    // Through POST /messages too, and record mode ignores it.
    const any = await postJson(`/api/v1/messages/${t.business.id}`, t.key, {
      channel: 'sms',
      mode: 'record',
      sender_type: 'staff',
      last_seen_message_id: 1,
      messages: [{ client_id: client.id, message: 'Called them' }],
    });
    expect(any.status).toBe(200);
    // Ignored there, but type-checked.
    const typed = await postJson(`/api/v1/messages/${t.business.id}`, t.key, {
      channel: 'sms',
      mode: 'record',
      sender_type: 'staff',
      last_seen_message_id: 'x',
      messages: [{ client_id: client.id, message: 'Called them' }],
    });
    expect(typed.status).toBe(422);
    expect(locs(typed.body)).toEqual([['body', 'last_seen_message_id']]);
  });

  it('holds for another sender’s reply (email too), not for notes, automatic answers or texts written for later', async () => {
    const { client, conversation, seen } = await conversationWithText();
    await addNote(t.business.id, conversation.id, 'Prefers mornings', colleague.id);
    const automatic = await postJson(`${t.base}/sms`, t.key, {
      sender_type: 'system',
      messages: [{ client_id: client.id, message: 'Reminder: tomorrow at 3' }],
    });
    const later = await sendSms(client.id, { staff_id: colleague.id, send_at: new Date(Date.now() + 86_400_000).toISOString() });
    expect([automatic.status, later.status]).toEqual([200, 200]);
    const passed = await sendSms(client.id, { last_seen_message_id: seen });
    expect(passed.status).toBe(200);
    const seenNow = passed.body.message_ids[0] as number;

    // A reply by email from someone else since holds a text, and an email.
    const email = await postJson(`${t.base}/email`, t.key, {
      sender_type: 'staff',
      staff_id: colleague.id,
      messages: [{ client_id: client.id, subject: 'Hi', message: 'Hello' }],
    });
    expect(email.status).toBe(200);
    const held = await sendSms(client.id, { last_seen_message_id: seenNow });
    expect(held.status).toBe(409);
    expect(held.body.new_message_ids).toEqual(email.body.message_ids);
    expect(held.body.detail).toMatch(/1 reply by someone else/);
    const heldEmail = await postJson(`${t.base}/email`, t.key, {
      sender_type: 'staff',
      last_seen_message_id: seenNow,
      messages: [{ client_id: client.id, subject: 'Hi', message: 'Hello' }],
    });
    expect(heldEmail.status).toBe(409);
  });

  it('a call never holds a send; a client’s message recorded from another system does', async () => {
    const { client, conversation, seen } = await conversationWithText();
    await createMessage(conversation, {
      channel: 'voice',
      messageType: 'CALL',
      direction: 'inbound',
      senderType: 'client',
      status: 'completed',
    });
    expect((await sendSms(client.id, { last_seen_message_id: seen })).status).toBe(200);
    const passed = await newestId(client.id);
    const recorded = await postJson(`/api/v1/messages/${t.business.id}`, t.key, {
      channel: 'sms',
      mode: 'record',
      sender_type: 'client',
      messages: [{ client_id: client.id, message: 'Texted the other number', direction: 'inbound' }],
    });
    expect(recorded.status).toBe(200);
    const held = await sendSms(client.id, { last_seen_message_id: passed });
    expect(held.status).toBe(409);
    expect(held.body.new_message_ids).toEqual(recorded.body.message_ids);
  });

  it('never holds a sender for their own reply', async () => {
    const { client, seen } = await conversationWithText();
    expect((await sendSms(client.id, { staff_id: colleague.id })).status).toBe(200);
    expect((await sendSms(client.id, { staff_id: colleague.id, last_seen_message_id: seen })).status).toBe(200);
    // Someone else is held by it.
    expect((await sendSms(client.id, { last_seen_message_id: seen })).status).toBe(409);
  });

  it('lists at most 100 new messages, oldest first; a new lead has nothing to check', async () => {
    const { client, conversation, seen } = await conversationWithText();
    const inbound = await db
      .insert(messages)
      .values(
        Array.from({ length: 101 }, () => ({
          businessId: t.business.id,
          conversationId: conversation.id,
          clientId: client.id,
          channel: 'sms' as const,
          direction: 'inbound' as const,
          messageType: 'TEXT' as const,
          senderType: 'client' as const,
          status: 'received' as const,
          origin: 'webhook' as const,
        })),
      )
      .returning({ id: messages.id });
    const held = await sendSms(client.id, { last_seen_message_id: seen });
    expect(held.status).toBe(409);
    expect(held.body.new_message_ids).toEqual(
      inbound
        .map((m) => m.id)
        .sort((a, b) => a - b)
        .slice(0, 100),
    );
    const lead = await postJson(`${t.base}/sms`, t.key, {
      sender_type: 'staff',
      last_seen_message_id: seen,
      messages: [{ to_number: '+14155550142', message: 'Welcome!' }],
    });
    expect(lead.status).toBe(200);
  });

  it('any message id of the business is a mark: a bulk send is held by the one recipient whose conversation moved past it', async () => {
    const quiet = await conversationWithText();
    const busy = await conversationWithText();
    // The mark: the newest message of a third conversation, newer than both.
    const { seen: mark } = await conversationWithText();
    expect((await clientTexts(busy.client.phoneNumber!)).status).toBe(200);
    const inbound = await newestId(busy.client.id);
    const bulk = (last_seen_message_id: number) =>
      postJson(`${t.base}/sms`, t.key, {
        sender_type: 'staff',
        last_seen_message_id,
        messages: [quiet.client.id, busy.client.id].map((client_id) => ({ client_id, message: 'We open at 9 tomorrow' })),
      });
    const held = await bulk(mark);
    expect(held.status).toBe(409);
    expect(held.body.new_message_ids).toEqual([inbound]);
    // Nothing of the bulk was stored, for either recipient.
    expect(await newestId(quiet.client.id)).toBe(quiet.seen);
    expect((await bulk(inbound)).status).toBe(200);
  });

  it('0 means nothing seen: any client message holds it', async () => {
    const client = await createClient(t.business.id, { phoneNumber: `+1415${String(4_300_000 + n++)}` });
    await createConversation(t.business.id, client.id);
    expect((await sendSms(client.id, { last_seen_message_id: 0 })).status).toBe(200);
    await clientTexts(client.phoneNumber!);
    expect((await sendSms(client.id, { last_seen_message_id: 0 })).status).toBe(409);
  });

  it('refuses an id of another business, or out of bounds, with its location', async () => {
    const { client } = await conversationWithText();
    const other = await restTenant();
    const otherClient = await createClient(other.business.id, { phoneNumber: '+14155550199' });
    const otherConversation = await createConversation(other.business.id, otherClient.id);
    const foreign = await createMessage(otherConversation, { direction: 'inbound', senderType: 'client', status: 'received' });
    for (const bad of [foreign.id, 999_999_999_999, -1, 1.5, Number.MAX_SAFE_INTEGER + 2, '7', null]) {
      const res = await sendSms(client.id, { last_seen_message_id: bad });
      expect(res.status, String(bad)).toBe(422);
      expect(new Set(locs(res.body).map((l) => l.join('.')))).toEqual(new Set(['body.last_seen_message_id']));
    }
  });
});

describe('collision guard in the inbox', () => {
  it('holds a text or a scheduled text after a colleague’s reply; the 409 lists it; sending with it seen goes', async () => {
    const { conversation, seen } = await conversationWithText();
    const ana = await staffCaller(colleague.token);
    const owner = await staffCaller(t.sessionToken);
    const reply = await ana.inbox.sendSms({ conversationId: conversation.id, message: 'I can do 4', last_seen_message_id: seen });
    const replyId = reply.message_ids[0]!;

    const err = await trpcError(
      owner.inbox.sendSms({ conversationId: conversation.id, message: 'Sure!', last_seen_message_id: seen }),
    );
    expect(err.code).toBe('CONFLICT');
    expect(err.cause.extra.fields?.new_message_ids).toEqual([replyId]);
    const tomorrow = new Date(Date.now() + 86_400_000);
    const scheduled = await trpcError(
      owner.inbox.sendSms({
        conversationId: conversation.id,
        message: 'Later',
        send_at: tomorrow.toISOString(),
        last_seen_message_id: seen,
      }),
    );
    expect(scheduled.code).toBe('CONFLICT');
    const email = await trpcError(
      owner.inbox.sendEmail({ conversationId: conversation.id, subject: 'Hi', message: 'Sure', last_seen_message_id: seen }),
    );
    expect(email.code).toBe('CONFLICT');

    // Send anyway: the composer passes the newest id the 409 listed.
    const sent = await owner.inbox.sendSms({ conversationId: conversation.id, message: 'Sure!', last_seen_message_id: replyId });
    expect(sent.message_ids).toHaveLength(1);
  });

  it('of two simultaneous sends that saw the same message, exactly one goes', async () => {
    for (let round = 0; round < 3; round++) {
      const { conversation, seen } = await conversationWithText();
      const [ana, owner] = await Promise.all([staffCaller(colleague.token), staffCaller(t.sessionToken)]);
      const results = await Promise.allSettled([
        ana.inbox.sendSms({ conversationId: conversation.id, message: 'From Ana', last_seen_message_id: seen }),
        owner.inbox.sendSms({ conversationId: conversation.id, message: 'From the owner', last_seen_message_id: seen }),
      ]);
      const sent = results.filter((r) => r.status === 'fulfilled');
      const held = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as TRPCError] : []));
      expect(sent).toHaveLength(1);
      expect(held.map((e) => e.code)).toEqual(['CONFLICT']);
      const stored = await db.select({ id: messages.id }).from(messages).where(eq(messages.conversationId, conversation.id));
      expect(stored).toHaveLength(2);
    }
  });
});
