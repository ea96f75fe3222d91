import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { businesses, clients, conversations, messages, webhookEvents, type BusinessSettings } from '@/db/schema';
import {
  createBusiness,
  createClient,
  createConversation,
  createMessage,
  createSmsNumber,
  createTenant,
  clientOptOuts,
} from '@/server/testing/factories';
import { touchConversations } from '@/server/services/conversations/activity';
import { twilioErrorMessage } from '@/server/shared/provider-errors';
import { followBusiness } from '@/server/testing/business-events';
import { api, jsonOf } from '@/server/testing/http';
import { inboundSmsForm, jobsWhere, postTwilio, TWILIO_PATHS, twilioSid, type TwilioParams } from '@/server/testing/webhooks';

const INCOMING = TWILIO_PATHS.smsIncoming;
const STATUS = TWILIO_PATHS.smsStatus;

let phoneCounter = 0;
/** A fresh client-side number per call, so tests never share a sender. */
const newPhone = () => `+1646${String(Date.now() % 1e4).padStart(4, '0')}${String(++phoneCounter).padStart(3, '0')}`;

async function tenantWithNumber() {
  const t = await createTenant();
  const number = await createSmsNumber(t.business.id);
  return { ...t, number, headers: { 'x-api-key': t.apiKey } };
}

const inbound = inboundSmsForm;

const messagesBySid = (sid: string) => db.select().from(messages).where(eq(messages.providerMessageId, sid));
const eventsBySid = (sid: string) =>
  db
    .select()
    .from(webhookEvents)
    .where(sql`${webhookEvents.payload}->>'MessageSid' = ${sid}`);
const eventCount = async () => (await db.select({ n: sql<number>`count(*)::int` }).from(webhookEvents))[0]!.n;
const clientsByPhone = (businessId: number, phone: string) =>
  db
    .select()
    .from(clients)
    .where(and(eq(clients.businessId, businessId), eq(clients.phoneNumber, phone)));
const conversationOf = async (id: number) => (await db.select().from(conversations).where(eq(conversations.id, id)))[0]!;
const messageOf = async (id: number) => (await db.select().from(messages).where(eq(messages.id, id)))[0]!;

describe('Twilio signatures (X-Twilio-Signature)', () => {
  it('a wrong signature is 403 on every Twilio webhook and stores nothing', async () => {
    const t = await tenantWithNumber();
    const before = await eventCount();
    const params = inbound(t.number.phoneNumber, newPhone(), 'hello');
    for (const path of Object.values(TWILIO_PATHS)) {
      const res = await postTwilio(
        path,
        { ...params, MessageStatus: 'delivered', CallSid: twilioSid('CA'), CallStatus: 'completed' },
        { signature: 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=' },
      );
      expect(res.status, path).toBe(403);
      expect((await jsonOf(res)).detail).toMatch(/signature/i);
    }
    expect(await eventCount()).toBe(before);
    expect(await eventsBySid(params.MessageSid!)).toHaveLength(0);
    expect(await messagesBySid(params.MessageSid!)).toHaveLength(0);
    expect(await clientsByPhone(t.business.id, params.From!)).toHaveLength(0);
  });

  it('a signature over other parameter values (a tampered body) is 403', async () => {
    const t = await tenantWithNumber();
    const params = inbound(t.number.phoneNumber, newPhone(), 'original');
    const res = await postTwilio(INCOMING, { ...params, Body: 'tampered' }, { signedParams: params });
    expect(res.status).toBe(403);
    expect(await messagesBySid(params.MessageSid!)).toHaveLength(0);
    expect(await eventsBySid(params.MessageSid!)).toHaveLength(0);
  });

  it('a request signed for https:// while PUBLIC_BASE_URL is http:// is 403 (the scheme is part of the signed URL)', async () => {
    const t = await tenantWithNumber();
    const params = inbound(t.number.phoneNumber, newPhone(), 'hello');
    const res = await postTwilio(INCOMING, params, { baseUrl: 'https://localhost:3000' });
    expect(res.status).toBe(403);
    expect(await eventsBySid(params.MessageSid!)).toHaveLength(0);
    expect(await messagesBySid(params.MessageSid!)).toHaveLength(0);
  });

  it('a signature made with another auth token is 403', async () => {
    const t = await tenantWithNumber();
    const params = inbound(t.number.phoneNumber, newPhone(), 'hello');
    const res = await postTwilio(INCOMING, params, { token: 'some-other-accounts-token' });
    expect(res.status).toBe(403);
    expect(await messagesBySid(params.MessageSid!)).toHaveLength(0);
  });

  it('a missing signature header is 403 and stores nothing', async () => {
    const t = await tenantWithNumber();
    const before = await eventCount();
    const params = inbound(t.number.phoneNumber, newPhone(), 'hello');
    const res = await postTwilio(INCOMING, params, { signature: null });
    expect(res.status).toBe(403);
    expect(await eventCount()).toBe(before);
    expect(await messagesBySid(params.MessageSid!)).toHaveLength(0);
  });

  it('unknown extra parameters that Twilio signed are accepted (the signature covers every posted parameter)', async () => {
    const t = await tenantWithNumber();
    const params = inbound(t.number.phoneNumber, newPhone(), 'hello', {
      FromCity: 'SAN FRANCISCO',
      FromCountry: 'US',
      SomeParameterTwilioAddsLater: 'x y & z',
      SmsMessageSid: 'ignored-alias',
    });
    const res = await postTwilio(INCOMING, params);
    expect(res.status).toBe(200);
    expect(await messagesBySid(params.MessageSid!)).toHaveLength(1);
    const [event] = await eventsBySid(params.MessageSid!);
    expect(event!.payload).toMatchObject({ SomeParameterTwilioAddsLater: 'x y & z', FromCity: 'SAN FRANCISCO' });
  });
});

describe('POST /webhooks/twilio/sms/incoming', () => {
  it('a new number becomes a lead with a conversation and one received TEXT; answers empty TwiML', async () => {
    const t = await tenantWithNumber();
    const from = newPhone();
    const params = inbound(t.number.phoneNumber, from, 'Can I move to Thursday?');
    const res = await postTwilio(INCOMING, params);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/xml/);
    expect(await res.text()).toMatch(/<Response>\s*<\/Response>|<Response\/>/);

    const leads = await clientsByPhone(t.business.id, from);
    expect(leads).toHaveLength(1);
    expect(leads[0]!.clientType).toBe('lead');
    const convs = await db.select().from(conversations).where(eq(conversations.clientId, leads[0]!.id));
    expect(convs).toHaveLength(1);
    expect(convs[0]).toMatchObject({
      businessId: t.business.id,
      status: 'open',
      unreadCount: 1,
      lastChannel: 'sms',
      lastMessageContent: 'Can I move to Thursday?',
    });
    const [msg] = await messagesBySid(params.MessageSid!);
    expect(msg).toMatchObject({
      businessId: t.business.id,
      conversationId: convs[0]!.id,
      clientId: leads[0]!.id,
      channel: 'sms',
      direction: 'inbound',
      messageType: 'TEXT',
      senderType: 'client',
      status: 'received',
      content: 'Can I move to Thursday?',
      fromAddress: from,
      toAddress: t.number.phoneNumber,
      provider: 'twilio',
      isRead: false,
    });
    expect(convs[0]!.lastMessageId).toBe(msg!.id);
    const events = await eventsBySid(params.MessageSid!);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      provider: 'twilio',
      kind: 'sms_incoming',
      outcome: 'processed',
      businessId: t.business.id,
      error: null,
    });
    expect(events[0]!.processedAt).toBeInstanceOf(Date);
  });

  it('the same MessageSid posted 5 times concurrently makes exactly one message and one event row', async () => {
    const t = await tenantWithNumber();
    const from = newPhone();
    const params = inbound(t.number.phoneNumber, from, 'are you open today?');
    const responses = await Promise.all(Array.from({ length: 5 }, () => postTwilio(INCOMING, params)));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    for (const r of responses) expect(await r.text()).toContain('<Response');
    expect(await messagesBySid(params.MessageSid!)).toHaveLength(1);
    expect(await eventsBySid(params.MessageSid!)).toHaveLength(1);
    const leads = await clientsByPhone(t.business.id, from);
    expect(leads).toHaveLength(1);
    const [conv] = await db.select().from(conversations).where(eq(conversations.clientId, leads[0]!.id));
    expect(conv!.unreadCount).toBe(1);
  });

  // Can fail rarely (two of the transactions starting in the same microsecond): that is the
  // (unread_count counts exactly the new message ids: see the same-timestamp test below).
  it('five different messages from one new number at once: one lead, one conversation, five messages, unread 5', async () => {
    const t = await tenantWithNumber();
    const from = newPhone();
    const all = Array.from({ length: 5 }, (_, i) => inbound(t.number.phoneNumber, from, `part ${i + 1}`));
    const responses = await Promise.all(all.map((p) => postTwilio(INCOMING, p)));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const leads = await clientsByPhone(t.business.id, from);
    expect(leads).toHaveLength(1);
    const convs = await db.select().from(conversations).where(eq(conversations.clientId, leads[0]!.id));
    expect(convs).toHaveLength(1);
    expect(convs[0]!.unreadCount).toBe(5);
    expect(await db.select().from(messages).where(eq(messages.conversationId, convs[0]!.id))).toHaveLength(5);
  });

  it('an existing client is found by From; unread_count goes up by one per new message', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone(), clientType: 'returning' });
    const conv = await createConversation(t.business.id, client.id);
    for (let i = 1; i <= 3; i++) {
      const params = inbound(t.number.phoneNumber, client.phoneNumber!, `message ${i}`);
      expect((await postTwilio(INCOMING, params)).status).toBe(200);
      const [msg] = await messagesBySid(params.MessageSid!);
      expect(msg).toMatchObject({ clientId: client.id, conversationId: conv.id, senderId: client.id });
      expect((await conversationOf(conv.id)).unreadCount).toBe(i);
    }
    expect(await clientsByPhone(t.business.id, client.phoneNumber!)).toHaveLength(1);
    expect((await db.select().from(clients).where(eq(clients.id, client.id)))[0]!.clientType).toBe('returning');
    expect(await db.select().from(conversations).where(eq(conversations.clientId, client.id))).toHaveLength(1);
  });

  it('unread_count stays exact when two inbound transactions share the same start timestamp', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const conv = await createConversation(t.business.id, client.id);
    const inboundRow = {
      direction: 'inbound' as const,
      senderType: 'client' as const,
      status: 'received' as const,
      isRead: false,
      provider: 'twilio' as const,
    };
    await db.transaction(async (tx) => {
      const [{ now }] = (await tx.execute<{ now: string }>(sql`select now()::text as now`)) as unknown as [{ now: string }];
      // Another webhook transaction that began in the same microsecond committed first: its message and its own +1.
      await createMessage(conv, {
        ...inboundRow,
        providerMessageId: twilioSid('SM'),
        createdAt: sql`${now}::timestamptz` as unknown as Date,
      });
      await db
        .update(conversations)
        .set({ unreadCount: sql`${conversations.unreadCount} + 1` })
        .where(eq(conversations.id, conv.id));
      // This transaction's message, then the bookkeeping processInboundSms does.
      const mine = await createMessage(conv, { ...inboundRow, providerMessageId: twilioSid('SM') }, tx);
      // touchConversations takes the new messages (it passed the conversation's id before, which
      // held only while conversation and message ids happened to line up).
      await touchConversations([mine], tx);
    });
    expect((await conversationOf(conv.id)).unreadCount).toBe(2);
  });

  it('a client of another business with the same number is not used: the business is found by To', async () => {
    const t = await tenantWithNumber();
    const other = await createBusiness();
    const phone = newPhone();
    const foreign = await createClient(other.id, { phoneNumber: phone });
    const params = inbound(t.number.phoneNumber, phone, 'hi');
    expect((await postTwilio(INCOMING, params)).status).toBe(200);
    const [msg] = await messagesBySid(params.MessageSid!);
    expect(msg!.businessId).toBe(t.business.id);
    expect(msg!.clientId).not.toBe(foreign.id);
    expect(await clientsByPhone(t.business.id, phone)).toHaveLength(1);
  });

  it('a resolved conversation reopens to open', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const conv = await createConversation(t.business.id, client.id, { status: 'resolved', resolvedByStaffId: t.owner.id });
    expect((await postTwilio(INCOMING, inbound(t.number.phoneNumber, client.phoneNumber!, 'one more question'))).status).toBe(
      200,
    );
    expect(await conversationOf(conv.id)).toMatchObject({ status: 'open', unreadCount: 1 });
  });

  it('a snoozed conversation reopens and its snoozed_until is cleared', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const conv = await createConversation(t.business.id, client.id, {
      status: 'snoozed',
      snoozedUntil: new Date(Date.now() + 86_400_000),
    });
    expect((await postTwilio(INCOMING, inbound(t.number.phoneNumber, client.phoneNumber!, 'hello?'))).status).toBe(200);
    expect(await conversationOf(conv.id)).toMatchObject({ status: 'open', snoozedUntil: null, unreadCount: 1 });
  });

  it('a pending conversation keeps its status (only resolved/snoozed reopen)', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const conv = await createConversation(t.business.id, client.id, { status: 'pending' });
    expect((await postTwilio(INCOMING, inbound(t.number.phoneNumber, client.phoneNumber!, 'ok'))).status).toBe(200);
    expect((await conversationOf(conv.id)).status).toBe('pending');
  });

  it('MMS media (NumMedia=2) is stored as two attachments with their URLs and content types', async () => {
    const t = await tenantWithNumber();
    const base = 'https://api.twilio.com/2010-04-01/Accounts/ACxxx/Messages/MMxxx/Media';
    const params = inbound(t.number.phoneNumber, newPhone(), 'two photos', {
      MessageSid: twilioSid('MM'),
      NumMedia: '2',
      MediaUrl0: `${base}/ME0`,
      MediaContentType0: 'image/jpeg',
      MediaUrl1: `${base}/ME1`,
      MediaContentType1: 'image/png',
    });
    expect((await postTwilio(INCOMING, params)).status).toBe(200);
    const [msg] = await messagesBySid(params.MessageSid!);
    expect(msg!.attachments).toHaveLength(2);
    expect(msg!.attachments).toEqual([
      expect.objectContaining({ url: `${base}/ME0`, content_type: 'image/jpeg' }),
      expect.objectContaining({ url: `${base}/ME1`, content_type: 'image/png' }),
    ]);
  });

  it('a To that no business owns: 200 with empty TwiML, the event stored as ignored, no message and no client', async () => {
    const from = newPhone();
    const params = inbound('+15005550006', from, 'wrong number?');
    const res = await postTwilio(INCOMING, params);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/xml/);
    expect(await res.text()).toMatch(/<Response>\s*<\/Response>|<Response\/>/);
    const events = await eventsBySid(params.MessageSid!);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ kind: 'sms_incoming', outcome: 'ignored', businessId: null });
    expect(events[0]!.error).toMatch(/\+15005550006/);
    expect(await messagesBySid(params.MessageSid!)).toHaveLength(0);
    expect(await db.select().from(clients).where(eq(clients.phoneNumber, from))).toHaveLength(0);
  });

  it('a payload without MessageSid (misrouted) answers 200 and stores nothing', async () => {
    const t = await tenantWithNumber();
    const before = await eventCount();
    const res = await postTwilio(INCOMING, { AccountSid: 'AC1', From: newPhone(), To: t.number.phoneNumber });
    expect(res.status).toBe(200);
    expect(await eventCount()).toBe(before);
  });
});

describe('SMS opt-out keywords', () => {
  const sendSms = (t: Awaited<ReturnType<typeof tenantWithNumber>>, clientId: number) =>
    api.post(`/api/v1/businesses/${t.business.id}/sms`, {
      headers: t.headers,
      body: {
        sender_type: 'staff',
        staff_id: t.owner.id,
        messages: [{ message: 'Your appointment is tomorrow', client_id: clientId }],
      },
    });
  const optedOut = async (clientId: number) => (await clientOptOuts(clientId)).sms;

  it('STOP opts the client out; a later send is recorded failed/opted_out with no job; START opts back in', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    expect((await postTwilio(INCOMING, inbound(t.number.phoneNumber, client.phoneNumber!, 'STOP'))).status).toBe(200);
    expect(await optedOut(client.id)).toBe(true);

    const res = await sendSms(t, client.id);
    expect(res.status).toBe(200);
    const [id] = (await jsonOf(res)).message_ids as number[];
    expect(await messageOf(id!)).toMatchObject({ status: 'failed', errorCode: 'opted_out', direction: 'outbound' });
    expect(await jobsWhere('sms.send', 'messageId', id!)).toHaveLength(0);

    expect((await postTwilio(INCOMING, inbound(t.number.phoneNumber, client.phoneNumber!, 'START'))).status).toBe(200);
    expect(await optedOut(client.id)).toBe(false);
    const again = await sendSms(t, client.id);
    const [id2] = (await jsonOf(again)).message_ids as number[];
    expect((await messageOf(id2!)).status).toBe('queued');
    expect(await jobsWhere('sms.send', 'messageId', id2!)).toHaveLength(1);
  });

  it('" stop " in lower case with spaces opts out; so does a new number texting STOP (a lead, opted out)', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    await postTwilio(INCOMING, inbound(t.number.phoneNumber, client.phoneNumber!, ' stop '));
    expect(await optedOut(client.id)).toBe(true);

    const stranger = newPhone();
    await postTwilio(INCOMING, inbound(t.number.phoneNumber, stranger, 'Unsubscribe'));
    const [lead] = await clientsByPhone(t.business.id, stranger);
    expect(lead).toMatchObject({ clientType: 'lead' });
    expect(await optedOut(lead!.id)).toBe(true);
  });

  it('every opt-out keyword opts out and every opt-in keyword opts back in', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    for (const out of ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']) {
      await postTwilio(INCOMING, inbound(t.number.phoneNumber, client.phoneNumber!, out));
      expect(await optedOut(client.id), out).toBe(true);
      const back = ['START', 'YES', 'UNSTOP'][out.length % 3]!;
      await postTwilio(INCOMING, inbound(t.number.phoneNumber, client.phoneNumber!, back));
      expect(await optedOut(client.id), back).toBe(false);
    }
  });

  it('"I can\'t stop by today" (a rule word, but not an opt-out) does not opt out, and is stored as an ordinary message', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const params = inbound(t.number.phoneNumber, client.phoneNumber!, "I can't stop by today");
    await postTwilio(INCOMING, params);
    expect(await optedOut(client.id)).toBe(false);
    expect(await messagesBySid(params.MessageSid!)).toMatchObject([{ flagged: false }]);
    const res = await sendSms(t, client.id);
    const [id] = (await jsonOf(res)).message_ids as number[];
    expect((await messageOf(id!)).status).toBe('queued');
  });

  it('a redelivered STOP after START does not opt the client out again (dedupe by MessageSid)', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const stop = inbound(t.number.phoneNumber, client.phoneNumber!, 'STOP');
    await postTwilio(INCOMING, stop);
    await postTwilio(INCOMING, inbound(t.number.phoneNumber, client.phoneNumber!, 'START'));
    await postTwilio(INCOMING, stop);
    expect(await optedOut(client.id)).toBe(false);
  });
});

describe('Opt-out wording, the confirmation and HELP (docs/api.md#opt-out-wording)', () => {
  const optedOut = async (clientId: number) => (await clientOptOuts(clientId)).sms;
  /** The automatic answers (system texts) in a client's conversation, oldest first. */
  const autoReplies = (clientId: number) =>
    db
      .select()
      .from(messages)
      .where(and(eq(messages.clientId, clientId), eq(messages.direction, 'outbound'), eq(messages.senderType, 'system')))
      .orderBy(messages.id);
  const setSettings = (businessId: number, settings: BusinessSettings) =>
    db.update(businesses).set({ settings }).where(eq(businesses.id, businessId));
  const confirmation = (name: string) => `${name}: You're unsubscribed and will get no more texts. Reply START to resubscribe.`;

  it('"Stop texting me" opts out and queues exactly one confirmation, even when the webhook is delivered again', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const params = inbound(t.number.phoneNumber, client.phoneNumber!, 'Stop texting me');
    // Delivered three times at once, then once more later.
    const responses = await Promise.all([1, 2, 3].map(() => postTwilio(INCOMING, params)));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    expect((await postTwilio(INCOMING, params)).status).toBe(200);

    expect(await optedOut(client.id)).toBe(true);
    const [stop] = await messagesBySid(params.MessageSid!);
    expect(stop!.providerMetadata).toMatchObject({ keyword_class: 'opt_out', keyword_match: 'stop' });
    const replies = await autoReplies(client.id);
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({
      conversationId: stop!.conversationId,
      channel: 'sms',
      messageType: 'TEXT',
      category: 'transactional',
      status: 'queued',
      content: confirmation(t.business.name),
      fromAddress: t.number.phoneNumber,
      toAddress: client.phoneNumber,
      responseId: stop!.id,
      attempts: 1,
      providerMetadata: { auto_reply: 'opt_out_confirmation', in_reply_to_sid: params.MessageSid },
    });
    expect(await jobsWhere('sms.send', 'messageId', replies[0]!.id)).toHaveLength(1);
    // The timeline shows the confirmation after the opt-out.
    expect((await db.select().from(conversations).where(eq(conversations.id, stop!.conversationId)))[0]!.lastMessageId).toBe(
      replies[0]!.id,
    );

    // Saying it again (a new message) while opted out sends no second confirmation.
    await postTwilio(INCOMING, inbound(t.number.phoneNumber, client.phoneNumber!, 'STOP TEXTING ME!!'));
    expect(await autoReplies(client.id)).toHaveLength(1);
    expect(await optedOut(client.id)).toBe(true);
  });

  it('a bare keyword Twilio confirms itself opts out without a confirmation of ours; "opt-out please" gets one', async () => {
    const t = await tenantWithNumber();
    const bare = await createClient(t.business.id, { phoneNumber: newPhone() });
    await postTwilio(INCOMING, inbound(t.number.phoneNumber, bare.phoneNumber!, 'STOP'));
    expect(await optedOut(bare.id)).toBe(true);
    expect(await autoReplies(bare.id)).toHaveLength(0);

    const worded = await createClient(t.business.id, { phoneNumber: newPhone() });
    await postTwilio(INCOMING, inbound(t.number.phoneNumber, worded.phoneNumber!, 'opt-out please'));
    expect(await optedOut(worded.id)).toBe(true);
    expect((await autoReplies(worded.id)).map((m) => m.content)).toEqual([confirmation(t.business.name)]);
  });

  it('the confirmation is the business\'s own text when set, and none when set to ""', async () => {
    const t = await tenantWithNumber();
    await setSettings(t.business.id, { opt_out_confirmation: 'Bloom: unsubscribed, no more texts. Reply START to rejoin.' });
    const a = await createClient(t.business.id, { phoneNumber: newPhone() });
    await postTwilio(INCOMING, inbound(t.number.phoneNumber, a.phoneNumber!, 'Unsubscribe me'));
    expect((await autoReplies(a.id)).map((m) => m.content)).toEqual([
      'Bloom: unsubscribed, no more texts. Reply START to rejoin.',
    ]);

    await setSettings(t.business.id, { opt_out_confirmation: '' });
    const b = await createClient(t.business.id, { phoneNumber: newPhone() });
    await postTwilio(INCOMING, inbound(t.number.phoneNumber, b.phoneNumber!, 'Quit texting me'));
    expect(await optedOut(b.id)).toBe(true);
    expect(await autoReplies(b.id)).toHaveLength(0);
  });

  it('"please stop texting me" does not opt out: stored, flagged for staff, nothing sent; texts still go out', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    for (const body of ['please stop texting me', 'no me envíen más mensajes']) {
      const params = inbound(t.number.phoneNumber, client.phoneNumber!, body);
      expect((await postTwilio(INCOMING, params)).status).toBe(200);
      const [msg] = await messagesBySid(params.MessageSid!);
      expect(msg, body).toMatchObject({
        content: body,
        direction: 'inbound',
        status: 'received',
        flagged: true,
        providerMetadata: expect.objectContaining({ keyword_class: 'likely_opt_out' }),
      });
    }
    expect(await optedOut(client.id)).toBe(false);
    expect(await autoReplies(client.id)).toHaveLength(0);
    // The conversation's flagged count follows (the inbox's flagged filters find it).
    const [conv] = await db.select().from(conversations).where(eq(conversations.clientId, client.id));
    expect(conv!.flaggedCount).toBe(2);
    const res = await api.post(`/api/v1/businesses/${t.business.id}/sms`, {
      headers: t.headers,
      body: { sender_type: 'staff', messages: [{ message: 'Sorry! Removing you now.', client_id: client.id }] },
    });
    const [id] = (await jsonOf(res)).message_ids as number[];
    expect((await messageOf(id!)).status).toBe('queued');
  });

  it('HELP is answered once per conversation per day, also when the client opted out; a later day answers again', async () => {
    const t = await tenantWithNumber();
    const helpText = new RegExp(
      `^${t.business.name}: for help call \\(415\\) \\d{3}-\\d{4} or reply here\\. Reply STOP to opt out\\. Msg&data rates may apply\\.$`,
    );
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const help = inbound(t.number.phoneNumber, client.phoneNumber!, 'HELP');
    await postTwilio(INCOMING, help);
    await postTwilio(INCOMING, help); // redelivered
    await postTwilio(INCOMING, inbound(t.number.phoneNumber, client.phoneNumber!, 'info')); // a second HELP the same day
    const replies = await autoReplies(client.id);
    expect(replies).toHaveLength(1);
    expect(replies[0]!.content).toMatch(helpText);
    expect(replies[0]).toMatchObject({
      status: 'queued',
      fromAddress: t.number.phoneNumber,
      toAddress: client.phoneNumber,
      providerMetadata: { auto_reply: 'help', in_reply_to_sid: help.MessageSid },
    });
    expect(await jobsWhere('sms.send', 'messageId', replies[0]!.id)).toHaveLength(1);
    expect(await optedOut(client.id)).toBe(false);

    // Answered yesterday: today's HELP is answered again.
    await db
      .update(messages)
      .set({ sentAt: new Date(Date.now() - 2 * 86_400_000) })
      .where(eq(messages.id, replies[0]!.id));
    await postTwilio(INCOMING, inbound(t.number.phoneNumber, client.phoneNumber!, 'Help!'));
    expect(await autoReplies(client.id)).toHaveLength(2);

    // An opted-out client gets the answer too (queued, the worker lets it through) and stays opted out.
    const out = await createClient(t.business.id, { phoneNumber: newPhone(), optedOutSms: true });
    await postTwilio(INCOMING, inbound(t.number.phoneNumber, out.phoneNumber!, 'HELP'));
    await postTwilio(INCOMING, inbound(t.number.phoneNumber, out.phoneNumber!, 'HELP'));
    const outReplies = await autoReplies(out.id);
    expect(outReplies).toHaveLength(1);
    expect(outReplies[0]).toMatchObject({ status: 'queued', errorCode: null });
    expect(outReplies[0]!.content).toMatch(helpText);
    expect(await optedOut(out.id)).toBe(true);
  });

  it('HELP gets the business\'s own answer when set, and none when set to ""', async () => {
    const t = await tenantWithNumber();
    await setSettings(t.business.id, { help_reply: 'Bloom Hair: call (415) 555-0100. Reply STOP to opt out.' });
    const a = await createClient(t.business.id, { phoneNumber: newPhone() });
    await postTwilio(INCOMING, inbound(t.number.phoneNumber, a.phoneNumber!, 'help'));
    expect((await autoReplies(a.id)).map((m) => m.content)).toEqual(['Bloom Hair: call (415) 555-0100. Reply STOP to opt out.']);

    await setSettings(t.business.id, { help_reply: '' });
    const b = await createClient(t.business.id, { phoneNumber: newPhone() });
    await postTwilio(INCOMING, inbound(t.number.phoneNumber, b.phoneNumber!, 'HELP'));
    expect(await autoReplies(b.id)).toHaveLength(0);
  });
});

describe('POST /webhooks/twilio/sms/status', () => {
  async function outboundSms(status: 'sending' | 'sent' | 'delivered' = 'sending') {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id);
    const conv = await createConversation(t.business.id, client.id);
    const msg = await createMessage(conv, { provider: 'twilio', providerMessageId: twilioSid('SM'), status });
    return { t, conv, msg };
  }
  /** A status callback as Twilio sends it: From is the sending number, one of the message's business's numbers. */
  const callback = async (sid: string, MessageStatus: string, extra: TwilioParams = {}) => {
    const [owner] = await db.execute<{ phone_number: string }>(
      sql`select n.phone_number from business_sms_numbers n join messages m on m.business_id = n.business_id where m.provider_message_id = ${sid} limit 1`,
    );
    const From = owner?.phone_number ?? '+14155550000';
    return postTwilio(STATUS, {
      MessageSid: sid,
      SmsSid: sid,
      MessageStatus,
      SmsStatus: MessageStatus,
      AccountSid: 'AC1',
      From,
      To: '+14155550001',
      ApiVersion: '2010-04-01',
      ...extra,
    });
  };

  it('every order (all 24) of queued/sending/sent/delivered ends delivered', async () => {
    const statuses = ['queued', 'sending', 'sent', 'delivered'];
    const permutations = (xs: string[]): string[][] =>
      xs.length <= 1 ? [xs] : xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
    const orders = permutations(statuses);
    expect(orders).toHaveLength(24);
    const { conv } = await outboundSms();
    const rows = await Promise.all(
      orders.map(() => createMessage(conv, { provider: 'twilio', providerMessageId: twilioSid('SM'), status: 'sending' })),
    );
    await Promise.all(
      orders.map(async (order, i) => {
        for (const s of order) expect((await callback(rows[i]!.providerMessageId!, s)).status).toBe(200);
      }),
    );
    const after = await Promise.all(rows.map((r) => messageOf(r.id)));
    expect(after.map((m, i) => `${orders[i]!.join('>')}: ${m.status}`)).toEqual(orders.map((o) => `${o.join('>')}: delivered`));
    for (const m of after) expect(m).toMatchObject({ errorCode: null, errorMessage: null });
    // Every callback is stored (4 per message); exactly the ones that moved the status are `processed`.
    for (const [i, r] of rows.entries()) {
      const events = await eventsBySid(r.providerMessageId!);
      expect(events).toHaveLength(4);
      const processed = events.filter((e) => e.outcome === 'processed').map((e) => (e.payload as TwilioParams).MessageStatus);
      const order = orders[i]!;
      const expected = order.indexOf('sent') < order.indexOf('delivered') ? ['sent', 'delivered'] : ['delivered'];
      expect(processed.sort(), order.join('>')).toEqual(expected.sort());
      expect(events.every((e) => e.outcome === 'processed' || e.outcome === 'ignored')).toBe(true);
    }
  });

  it('the four callbacks of each of 24 messages arriving all at once still end delivered', async () => {
    const { conv } = await outboundSms();
    const rows = await Promise.all(
      Array.from({ length: 24 }, () =>
        createMessage(conv, { provider: 'twilio', providerMessageId: twilioSid('SM'), status: 'sending' }),
      ),
    );
    const responses = await Promise.all(
      rows.flatMap((r) => ['delivered', 'sent', 'queued', 'sending'].map((s) => callback(r.providerMessageId!, s))),
    );
    expect(responses.every((r) => r.status === 200)).toBe(true);
    const after = await Promise.all(rows.map((r) => messageOf(r.id)));
    expect(after.map((m) => m.status)).toEqual(rows.map(() => 'delivered'));
  });

  it('undelivered with ErrorCode 30003 after sent → undelivered with error_code "30003"', async () => {
    const { msg } = await outboundSms('sending');
    await callback(msg.providerMessageId!, 'sent');
    await callback(msg.providerMessageId!, 'undelivered', { ErrorCode: '30003' });
    expect(await messageOf(msg.id)).toMatchObject({
      status: 'undelivered',
      errorCode: '30003',
      errorMessage: expect.stringContaining('30003'),
    });
  });

  it('undelivered with ErrorCode 30007 stores the plain words and what to do, the code kept in front', async () => {
    const { msg } = await outboundSms('sent');
    const res = await callback(msg.providerMessageId!, 'undelivered', { ErrorCode: '30007' });
    expect(res.status).toBe(200);
    const row = await messageOf(msg.id);
    expect(row).toMatchObject({ status: 'undelivered', errorCode: '30007', errorMessage: twilioErrorMessage('30007') });
    expect(row.errorMessage).toMatch(/^Twilio error 30007: The carrier filtered the message as spam\. Reword it/);
  });

  it('an ErrorCode without plain words falls back to "Twilio error NNNNN"', async () => {
    const { msg } = await outboundSms('sent');
    await callback(msg.providerMessageId!, 'failed', { ErrorCode: '30999' });
    expect(await messageOf(msg.id)).toMatchObject({ status: 'failed', errorCode: '30999', errorMessage: 'Twilio error 30999' });
  });

  it('failed after delivered leaves the message delivered, without an error', async () => {
    const { msg } = await outboundSms('sent');
    await callback(msg.providerMessageId!, 'delivered');
    const res = await callback(msg.providerMessageId!, 'failed', { ErrorCode: '30008' });
    expect(res.status).toBe(200);
    expect(await messageOf(msg.id)).toMatchObject({ status: 'delivered', errorCode: null, errorMessage: null });
    const failed = (await eventsBySid(msg.providerMessageId!)).find(
      (e) => (e.payload as TwilioParams).MessageStatus === 'failed',
    );
    expect(failed!.outcome).toBe('ignored');
  });

  it('duplicates of the same (MessageSid, MessageStatus) are one event row', async () => {
    const { msg } = await outboundSms('sent');
    const responses = await Promise.all([1, 2, 3, 4].map(() => callback(msg.providerMessageId!, 'delivered')));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    await callback(msg.providerMessageId!, 'delivered');
    const events = await eventsBySid(msg.providerMessageId!);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ kind: 'sms_status', outcome: 'processed' });
    expect((await messageOf(msg.id)).status).toBe('delivered');
  });

  it('a status callback reaches the inbox stream as message.status only when the status moves', async () => {
    const { t, conv, msg } = await outboundSms('sent');
    const stream = followBusiness(t.business.id, t.business.id);
    try {
      await stream.joined;
      await callback(msg.providerMessageId!, 'delivered');
      await callback(msg.providerMessageId!, 'sent');
      expect(await stream.next()).toMatchObject({
        type: 'message.status',
        businessId: t.business.id,
        conversationIds: [conv.id],
        messageIds: [msg.id],
      });
      await expect(stream.next(500)).rejects.toThrow('no event in time');
    } finally {
      stream.stop();
    }
  });
});

describe('inbox events (the live stream, from the event log)', () => {
  it('an inbound SMS reaches the stream as message.created naming the business, the conversation and the message', async () => {
    const t = await tenantWithNumber();
    const stream = followBusiness(t.business.id, t.business.id);
    try {
      await stream.joined;
      const params = inbound(t.number.phoneNumber, newPhone(), 'ping');
      expect((await postTwilio(INCOMING, params)).status).toBe(200);
      const [msg] = await messagesBySid(params.MessageSid!);
      const frames = [await stream.next(), await stream.next()];
      // The conversation it opened, then the message.
      expect(frames.map(({ eventId: _, ...f }) => f)).toEqual([
        { type: 'conversation.updated', businessId: t.business.id, conversationIds: [msg!.conversationId] },
        { type: 'message.created', businessId: t.business.id, conversationIds: [msg!.conversationId], messageIds: [msg!.id] },
      ]);
    } finally {
      stream.stop();
    }
  });

  it('a duplicate inbound SMS reaches the stream with nothing', async () => {
    const t = await tenantWithNumber();
    const params = inbound(t.number.phoneNumber, newPhone(), 'ping');
    await postTwilio(INCOMING, params);
    const [first] = await db.execute<{ id: number }>(
      sql`select max(id)::int as id from events where business_id = ${t.business.id}`,
    );
    const stream = followBusiness(t.business.id, t.business.id, first!.id);
    try {
      await stream.joined;
      await postTwilio(INCOMING, params);
      await expect(stream.next(500)).rejects.toThrow('no event in time');
    } finally {
      stream.stop();
    }
  });
});
