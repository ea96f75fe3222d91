import { and, eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { conversations, messages } from '@/db/schema';
import { createClient, createConversation, createSmsNumber, createStaff, createTenant } from '@/server/testing/factories';
import { findOne } from '@/server/testing/twiml';
import { callsBySid, callStatus, followAction, newCall, startCall, type TestCall } from '@/server/testing/voice';
import { twilioSid } from '@/server/testing/webhooks';
import { onlyRow } from '@/server/testing/messages';

/**
 * A call is one CALL message in the client's conversation, whatever order and however often the
 * instructions requests and the status callbacks of its legs arrive.
 */
let phoneCounter = 0;
const newPhone = () => `+1347${String(Date.now() % 1e4).padStart(4, '0')}${String(++phoneCounter).padStart(3, '0')}`;

async function setup() {
  const t = await createTenant();
  const number = (await createSmsNumber(t.business.id)).phoneNumber;
  const agent = await createStaff(t.business.id);
  const colleague = await createStaff(t.business.id);
  const client = await createClient(t.business.id, { phoneNumber: newPhone() });
  const conv = await createConversation(t.business.id, client.id, { assignedStaffId: agent.id });
  return { ...t, number, agent, colleague, client, conv };
}

/** A leg our TwiML dialled: its own CallSid, the call's as ParentCallSid. */
const leg = (call: TestCall, From: string, To: string) => ({ CallSid: twilioSid('CA'), ParentCallSid: call.CallSid, From, To });

const callMessagesOf = (conversationId: number) =>
  db
    .select()
    .from(messages)
    .where(and(eq(messages.conversationId, conversationId), eq(messages.messageType, 'CALL')));
const conversationOf = async (id: number) => (await db.select().from(conversations).where(eq(conversations.id, id)))[0]!;

describe('one CALL message per call', () => {
  it("browser → phone: instructions, the dialled leg's callbacks (each twice) and the dial result make one completed outbound CALL", async () => {
    const s = await setup();
    const call = newCall(`client:staff-${s.agent.id}`, s.client.phoneNumber!);
    const dial = findOne((await startCall(call)).twiml!, 'Dial');
    const child = leg(call, s.number, s.client.phoneNumber!);
    for (const status of ['initiated', 'ringing', 'in-progress', 'completed']) {
      const extra: Record<string, string> = status === 'completed' ? { CallDuration: '40' } : {};
      expect((await callStatus(child, status, extra)).status).toBe(200);
      expect((await callStatus(child, status, extra)).status).toBe(200);
    }
    await followAction(dial, call, { DialCallStatus: 'completed', DialCallDuration: '40', DialCallSid: child.CallSid });
    await followAction(dial, call, { DialCallStatus: 'completed', DialCallDuration: '40', DialCallSid: child.CallSid });

    const row = onlyRow(await callMessagesOf(s.conv.id));
    expect(row).toMatchObject({
      providerMessageId: call.CallSid,
      direction: 'outbound',
      status: 'completed',
      callDurationSeconds: 40,
      staffId: s.agent.id,
      senderId: s.agent.id,
    });
    expect(await callsBySid(child.CallSid)).toHaveLength(0);
    expect(await conversationOf(s.conv.id)).toMatchObject({ unreadCount: 0, lastMessageId: row.id, lastChannel: 'voice' });
  });

  it("browser → phone, reordered: the leg's completed callback before the instructions request still ends as one call placed by the staff member", async () => {
    const s = await setup();
    const call = newCall(`client:staff-${s.agent.id}`, s.client.phoneNumber!);
    const child = leg(call, s.number, s.client.phoneNumber!);
    await callStatus(child, 'completed', { CallDuration: '12' });
    await callStatus(child, 'ringing');
    const dial = findOne((await startCall(call)).twiml!, 'Dial');
    await followAction(dial, call, { DialCallStatus: 'completed', DialCallDuration: '12' });
    expect(onlyRow(await callMessagesOf(s.conv.id))).toMatchObject({
      providerMessageId: call.CallSid,
      direction: 'outbound',
      status: 'completed',
      callDurationSeconds: 12,
      staffId: s.agent.id,
      senderId: s.agent.id,
    });
  });

  it('phone → business: ring legs left unanswered do not end the call; the one answered names who took it; one inbound CALL, unread once', async () => {
    const s = await setup();
    const call = newCall(s.client.phoneNumber!, s.number);
    const first = findOne((await startCall(call)).twiml!, 'Dial');
    const toAgent = leg(call, s.client.phoneNumber!, `client:staff-${s.agent.id}`);
    await callStatus(toAgent, 'ringing');
    await callStatus(toAgent, 'no-answer');
    await callStatus(toAgent, 'no-answer');
    expect((await callsBySid(call.CallSid))[0]).toMatchObject({ status: 'ringing', callOutcome: null });

    const team = findOne(
      (await followAction(first, call, { DialCallStatus: 'no-answer', CallStatus: 'ringing' })).twiml!,
      'Dial',
    );
    const toColleague = leg(call, s.client.phoneNumber!, `client:staff-${s.colleague.id}`);
    const toOwner = leg(call, s.client.phoneNumber!, `client:staff-${s.owner.id}`);
    await Promise.all([callStatus(toColleague, 'ringing'), callStatus(toOwner, 'ringing')]);
    await callStatus(toColleague, 'in-progress');
    await callStatus(toOwner, 'canceled'); // the other browser stops ringing once one accepted
    await followAction(team, call, { DialCallStatus: 'completed', DialCallDuration: '25' });
    await callStatus(toColleague, 'completed', { CallDuration: '25' });
    await callStatus({ ...call }, 'completed', { CallDuration: '31' });
    await callStatus({ ...call }, 'completed', { CallDuration: '31' });

    expect(onlyRow(await callMessagesOf(s.conv.id))).toMatchObject({
      providerMessageId: call.CallSid,
      direction: 'inbound',
      status: 'completed',
      staffId: s.colleague.id,
      receiverId: s.colleague.id,
      callOutcome: null,
    });
    expect(
      await db
        .select()
        .from(messages)
        .where(inArray(messages.providerMessageId, [toAgent.CallSid, toColleague.CallSid, toOwner.CallSid])),
    ).toHaveLength(0);
    expect((await conversationOf(s.conv.id)).unreadCount).toBe(1);
  });

  it("phone → business, reordered: an answered leg and the call's end before the instructions request make the same one message", async () => {
    const s = await setup();
    const call = newCall(s.client.phoneNumber!, s.number);
    const toAgent = leg(call, s.client.phoneNumber!, `client:staff-${s.agent.id}`);
    await callStatus(toAgent, 'in-progress');
    await callStatus({ ...call }, 'completed', { CallDuration: '50' });
    const first = findOne((await startCall(call)).twiml!, 'Dial');
    await followAction(first, call, { DialCallStatus: 'completed', DialCallDuration: '44' });
    await callStatus(toAgent, 'completed', { CallDuration: '44' });

    expect(onlyRow(await callMessagesOf(s.conv.id))).toMatchObject({
      providerMessageId: call.CallSid,
      clientId: s.client.id,
      direction: 'inbound',
      status: 'completed',
      staffId: s.agent.id,
      callOutcome: null,
    });
    expect((await conversationOf(s.conv.id)).unreadCount).toBe(1);
  });

  it('everything at once: the instructions request and every callback concurrently still make one message', async () => {
    const s = await setup();
    const call = newCall(s.client.phoneNumber!, s.number);
    const toAgent = leg(call, s.client.phoneNumber!, `client:staff-${s.agent.id}`);
    const answers = await Promise.all([
      startCall(call),
      callStatus({ ...call }, 'ringing'),
      callStatus(toAgent, 'ringing'),
      callStatus(toAgent, 'in-progress'),
      callStatus(toAgent, 'completed', { CallDuration: '5' }),
      callStatus({ ...call }, 'completed', { CallDuration: '9' }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(onlyRow(await callMessagesOf(s.conv.id))).toMatchObject({ status: 'completed', staffId: s.agent.id });
    expect((await conversationOf(s.conv.id)).unreadCount).toBe(1);
  });
});
