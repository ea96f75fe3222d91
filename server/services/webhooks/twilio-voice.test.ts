import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { clients, conversations, messages, webhookEvents } from '@/db/schema';
import { createClient, createConversation, createSmsNumber, createStaff, createTenant } from '@/server/testing/factories';
import { postTwilio, TWILIO_PATHS, twilioSid, type TwilioParams } from '@/server/testing/webhooks';
import { onlyRow } from '@/server/testing/messages';

const VOICE = TWILIO_PATHS.voiceStatus;
const RECORDING = 'https://api.twilio.com/2010-04-01/Accounts/AC1/Recordings/RE0123456789abcdef0123456789abcdef';

let phoneCounter = 0;
const newPhone = () => `+1718${String(Date.now() % 1e4).padStart(4, '0')}${String(++phoneCounter).padStart(3, '0')}`;

async function tenantWithNumber() {
  const t = await createTenant();
  const number = await createSmsNumber(t.business.id);
  return { ...t, number };
}

const callsBySid = (callSid: string) => db.select().from(messages).where(eq(messages.providerMessageId, callSid));
const eventsBySid = (callSid: string) =>
  db
    .select()
    .from(webhookEvents)
    .where(and(eq(webhookEvents.kind, 'voice_status'), sql`${webhookEvents.payload}->>'CallSid' = ${callSid}`));
const conversationOf = async (id: number) => (await db.select().from(conversations).where(eq(conversations.id, id)))[0]!;

/** A status callback of one call leg, as Twilio posts it. */
function voiceCallback(
  call: { CallSid: string; From: string; To: string; Direction: string },
  CallStatus: string,
  extra: TwilioParams = {},
) {
  return postTwilio(VOICE, {
    AccountSid: 'AC' + '1'.repeat(32),
    ApiVersion: '2010-04-01',
    CallbackSource: 'call-progress-events',
    ...call,
    CallStatus,
    ...extra,
  });
}

describe('POST /webhooks/twilio/voice/status', () => {
  it("initiated → ringing → in-progress → completed make exactly one completed CALL in the caller's conversation", async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const conv = await createConversation(t.business.id, client.id);
    const call = { CallSid: twilioSid('CA'), From: client.phoneNumber!, To: t.number.phoneNumber, Direction: 'inbound' };
    const steps: [string, TwilioParams][] = [
      ['initiated', { SequenceNumber: '0' }],
      ['ringing', { SequenceNumber: '1' }],
      ['in-progress', { SequenceNumber: '2' }],
      [
        'completed',
        { SequenceNumber: '3', CallDuration: '42', RecordingUrl: RECORDING, RecordingSid: 'RE0123456789abcdef0123456789abcdef' },
      ],
    ];
    for (const [status, extra] of steps) {
      const res = await voiceCallback(call, status, extra);
      expect(res.status, status).toBe(200);
    }
    const row = onlyRow(await callsBySid(call.CallSid));
    expect(row).toMatchObject({
      businessId: t.business.id,
      conversationId: conv.id,
      clientId: client.id,
      channel: 'voice',
      messageType: 'CALL',
      direction: 'inbound',
      senderType: 'client',
      status: 'completed',
      callDurationSeconds: 42,
      recordingUrl: RECORDING,
      callOutcome: null,
      provider: 'twilio',
      isRead: false,
    });
    // One new inbound message: unread +1, not +4.
    expect(await conversationOf(conv.id)).toMatchObject({ unreadCount: 1, lastMessageId: row.id, lastChannel: 'voice' });
    const events = await eventsBySid(call.CallSid);
    expect(events).toHaveLength(4);
    expect(events.map((e) => e.outcome)).toEqual(['processed', 'processed', 'processed', 'processed']);
    // No second client was created for the caller.
    expect(
      await db
        .select()
        .from(clients)
        .where(and(eq(clients.businessId, t.business.id), eq(clients.phoneNumber, client.phoneNumber!))),
    ).toHaveLength(1);
  });

  it('the same callbacks reordered (completed first, then ringing, in-progress) still end completed, one message, duration kept', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const conv = await createConversation(t.business.id, client.id);
    const call = { CallSid: twilioSid('CA'), From: client.phoneNumber!, To: t.number.phoneNumber, Direction: 'inbound' };
    await voiceCallback(call, 'completed', { CallDuration: '42', RecordingUrl: RECORDING });
    await voiceCallback(call, 'ringing');
    await voiceCallback(call, 'in-progress');
    await voiceCallback(call, 'initiated');
    expect(onlyRow(await callsBySid(call.CallSid))).toMatchObject({
      conversationId: conv.id,
      status: 'completed',
      callDurationSeconds: 42,
      recordingUrl: RECORDING,
      callOutcome: null,
    });
    expect((await conversationOf(conv.id)).unreadCount).toBe(1);
  });

  it('all four callbacks at once still make one message that ends completed', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const call = { CallSid: twilioSid('CA'), From: client.phoneNumber!, To: t.number.phoneNumber, Direction: 'inbound' };
    const responses = await Promise.all([
      voiceCallback(call, 'initiated'),
      voiceCallback(call, 'ringing'),
      voiceCallback(call, 'in-progress'),
      voiceCallback(call, 'completed', { CallDuration: '42' }),
    ]);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(onlyRow(await callsBySid(call.CallSid))).toMatchObject({ status: 'completed', callDurationSeconds: 42 });
    const [conv] = await db.select().from(conversations).where(eq(conversations.clientId, client.id));
    expect(conv!.unreadCount).toBe(1);
    expect((await eventsBySid(call.CallSid)).every((e) => e.outcome === 'processed')).toBe(true);
  });

  it('duplicate callbacks are no-ops: one event row per (CallSid, CallStatus), one message, nothing changes', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const call = { CallSid: twilioSid('CA'), From: client.phoneNumber!, To: t.number.phoneNumber, Direction: 'inbound' };
    await voiceCallback(call, 'ringing');
    await voiceCallback(call, 'completed', { CallDuration: '7' });
    const before = (await callsBySid(call.CallSid))[0]!;
    for (const status of ['ringing', 'completed', 'completed']) {
      expect((await voiceCallback(call, status, status === 'completed' ? { CallDuration: '7' } : {})).status).toBe(200);
    }
    expect(onlyRow(await callsBySid(call.CallSid))).toMatchObject({
      status: 'completed',
      callDurationSeconds: 7,
      statusUpdatedAt: before.statusUpdatedAt,
    });
    expect(await eventsBySid(call.CallSid)).toHaveLength(2);
    const [conv] = await db.select().from(conversations).where(eq(conversations.clientId, client.id));
    expect(conv!.unreadCount).toBe(1);
  });

  it('an inbound call from an unknown number creates a lead and a conversation', async () => {
    const t = await tenantWithNumber();
    const caller = newPhone();
    const call = { CallSid: twilioSid('CA'), From: caller, To: t.number.phoneNumber, Direction: 'inbound' };
    await voiceCallback(call, 'ringing');
    const [lead] = await db
      .select()
      .from(clients)
      .where(and(eq(clients.businessId, t.business.id), eq(clients.phoneNumber, caller)));
    expect(lead!.clientType).toBe('lead');
    const [conv] = await db.select().from(conversations).where(eq(conversations.clientId, lead!.id));
    const [row] = await callsBySid(call.CallSid);
    expect(row).toMatchObject({ clientId: lead!.id, conversationId: conv!.id, status: 'ringing' });
  });

  it('an inbound call ending no-answer is marked call_outcome missed', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const call = { CallSid: twilioSid('CA'), From: client.phoneNumber!, To: t.number.phoneNumber, Direction: 'inbound' };
    await voiceCallback(call, 'ringing');
    await voiceCallback(call, 'no-answer', { CallDuration: '0' });
    expect(onlyRow(await callsBySid(call.CallSid))).toMatchObject({
      direction: 'inbound',
      status: 'no_answer',
      callOutcome: 'missed',
    });
  });

  it('an inbound call that completed is not turned into a missed call by a late busy callback', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const call = { CallSid: twilioSid('CA'), From: client.phoneNumber!, To: t.number.phoneNumber, Direction: 'inbound' };
    await voiceCallback(call, 'completed', { CallDuration: '30' });
    await voiceCallback(call, 'busy');
    expect((await callsBySid(call.CallSid))[0]).toMatchObject({
      status: 'completed',
      callOutcome: null,
      callDurationSeconds: 30,
    });
  });

  it('an outbound call from client:staff-<id> to a client number is an outbound CALL with staff_id', async () => {
    const t = await tenantWithNumber();
    const agent = await createStaff(t.business.id);
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const conv = await createConversation(t.business.id, client.id);
    const call = { CallSid: twilioSid('CA'), From: `client:staff-${agent.id}`, To: client.phoneNumber!, Direction: 'inbound' };
    await voiceCallback(call, 'ringing');
    await voiceCallback(call, 'in-progress');
    await voiceCallback(call, 'completed', { CallDuration: '65' });
    expect(onlyRow(await callsBySid(call.CallSid))).toMatchObject({
      businessId: t.business.id,
      conversationId: conv.id,
      clientId: client.id,
      channel: 'voice',
      messageType: 'CALL',
      direction: 'outbound',
      senderType: 'staff',
      senderId: agent.id,
      receiverType: 'client',
      staffId: agent.id,
      status: 'completed',
      callDurationSeconds: 65,
      callOutcome: null,
      isRead: true,
    });
    // An outbound call is never unread.
    expect((await conversationOf(conv.id)).unreadCount).toBe(0);
  });

  it('an outbound call unanswered by the client is no_answer but not a missed call', async () => {
    const t = await tenantWithNumber();
    const agent = await createStaff(t.business.id);
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const call = { CallSid: twilioSid('CA'), From: `client:staff-${agent.id}`, To: client.phoneNumber!, Direction: 'inbound' };
    await voiceCallback(call, 'no-answer');
    expect((await callsBySid(call.CallSid))[0]).toMatchObject({ direction: 'outbound', status: 'no_answer', callOutcome: null });
  });

  it('a call to a number no business owns is stored ignored, with no message', async () => {
    const call = { CallSid: twilioSid('CA'), From: newPhone(), To: '+15005550009', Direction: 'inbound' };
    expect((await voiceCallback(call, 'ringing')).status).toBe(200);
    expect(await callsBySid(call.CallSid)).toHaveLength(0);
    const events = await eventsBySid(call.CallSid);
    expect(events).toHaveLength(1);
    expect(events[0]!.outcome).toBe('ignored');
  });

  it('an unknown CallStatus is stored ignored and changes nothing', async () => {
    const t = await tenantWithNumber();
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const call = { CallSid: twilioSid('CA'), From: client.phoneNumber!, To: t.number.phoneNumber, Direction: 'inbound' };
    expect((await voiceCallback(call, 'teleported')).status).toBe(200);
    expect(await callsBySid(call.CallSid)).toHaveLength(0);
    const [event] = await eventsBySid(call.CallSid);
    expect(event).toMatchObject({ outcome: 'ignored', error: expect.stringContaining('teleported') });
  });
});
