import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { businesses, clients, conversations, messages, staff, type BusinessSettings } from '@/db/schema';
import {
  createClient,
  createConversation,
  createLocation,
  createSmsNumber,
  createStaff,
  createTenant,
} from '@/server/testing/factories';
import { findAll, findOne, parseTwiml, type TwimlNode } from '@/server/testing/twiml';
import { calleeAnswers, callsBySid, followAction, newCall, startCall, VOICE_PATHS } from '@/server/testing/voice';
import { postTwilio, TEST_BASE_URL, twilioSignature } from '@/server/testing/webhooks';
import { onlyRow } from '@/server/testing/messages';

const BASE = `${TEST_BASE_URL}/api/v1`;
const STATUS_URL = `${BASE}/webhooks/twilio/voice/status`;
const RECORDING_URL = `${BASE}/webhooks/twilio/voice/recording`;
const nextStep = (step: string) => `${BASE}/voice-calls/instructions?step=${step}`;

let phoneCounter = 0;
const newPhone = () => `+1646${String(Date.now() % 1e4).padStart(4, '0')}${String(++phoneCounter).padStart(3, '0')}`;

async function business(settings: BusinessSettings = {}) {
  const t = await createTenant();
  if (Object.keys(settings).length) await db.update(businesses).set({ settings }).where(eq(businesses.id, t.business.id));
  const number = await createSmsNumber(t.business.id);
  return { ...t, number: number.phoneNumber };
}

const identities = (dial: TwimlNode) => findAll(dial, 'Identity').map((i) => i.text);
const verbs = (twiml: TwimlNode) => twiml.children.map((c) => c.name);
const DEFAULT_NOTICE = 'This call may be recorded.';
const conversationsOf = (clientId: number) => db.select().from(conversations).where(eq(conversations.clientId, clientId));

describe('POST /voice-calls/instructions: browser → phone', () => {
  it("dials the number from the business's default number, answerOnBridge, status callbacks; one outbound CALL in the client's existing conversation", async () => {
    const t = await business();
    const agent = await createStaff(t.business.id);
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const conv = await createConversation(t.business.id, client.id);
    const call = newCall(`client:staff-${agent.id}`, client.phoneNumber!);

    const answer = await startCall(call);
    expect(answer.status).toBe(200);
    const dial = findOne(answer.twiml!, 'Dial');
    expect(answer.twiml!.children.map((c) => c.name)).toEqual(['Dial']);
    expect(dial.attrs).toMatchObject({ callerId: t.number, answerOnBridge: 'true', action: nextStep('outbound') });
    expect(dial.attrs.record).toBeUndefined();
    const number = findOne(dial, 'Number');
    expect(number.text).toBe(client.phoneNumber);
    expect(number.attrs).toMatchObject({
      statusCallback: STATUS_URL,
      statusCallbackEvent: 'initiated ringing answered completed',
    });

    expect(onlyRow(await callsBySid(call.CallSid))).toMatchObject({
      conversationId: conv.id,
      clientId: client.id,
      messageType: 'CALL',
      channel: 'voice',
      direction: 'outbound',
      senderType: 'staff',
      staffId: agent.id,
      status: 'ringing',
      isRead: true,
    });
    expect(await conversationsOf(client.id)).toHaveLength(1);
  });

  it("a ClientId alone dials that client's phone; record_calls adds dual recording with its status callback", async () => {
    const t = await business({ record_calls: true });
    const agent = await createStaff(t.business.id);
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    const call = { ...newCall(`client:staff-${agent.id}`, ''), ClientId: String(client.id) };

    const answer = await startCall(call);
    expect(verbs(answer.twiml!)).toEqual(['Say', 'Dial']);
    const dial = findOne(answer.twiml!, 'Dial');
    expect(findOne(dial, 'Number').text).toBe(client.phoneNumber);
    expect(dial.attrs).toMatchObject({
      record: 'record-from-answer-dual',
      recordingStatusCallback: RECORDING_URL,
      recordingStatusCallbackEvent: 'completed',
    });
    expect(await callsBySid(call.CallSid)).toMatchObject([{ clientId: client.id, direction: 'outbound' }]);
  });

  it('a number typed as a person types it is normalised; an unknown number becomes a lead with a conversation', async () => {
    const t = await business();
    const agent = await createStaff(t.business.id);
    const call = newCall(`client:staff-${agent.id}`, '(415) 555-0187');
    const answer = await startCall(call);
    expect(findOne(answer.twiml!, 'Number').text).toBe('+14155550187');
    const [lead] = await db
      .select()
      .from(clients)
      .where(and(eq(clients.businessId, t.business.id), eq(clients.phoneNumber, '+14155550187')));
    expect(lead!.clientType).toBe('lead');
    const [conv] = await conversationsOf(lead!.id);
    expect(await callsBySid(call.CallSid)).toMatchObject([
      { clientId: lead!.id, conversationId: conv!.id, direction: 'outbound' },
    ]);
  });

  it('an identity that is no active staff member is refused with <Reject/> and nothing is recorded', async () => {
    const t = await business();
    const inactive = await createStaff(t.business.id, { active: false });
    for (const from of [`client:staff-${inactive.id}`, 'client:staff-999999999', 'client:mallory', 'client:staff-']) {
      const call = newCall(from, newPhone());
      const answer = await startCall(call);
      expect(answer.status, from).toBe(200);
      expect(
        answer.twiml!.children.map((c) => c.name),
        from,
      ).toEqual(['Reject']);
      expect(await callsBySid(call.CallSid), from).toHaveLength(0);
    }
  });

  it('a ClientId of another business is not dialled', async () => {
    const t = await business();
    const other = await business();
    const agent = await createStaff(t.business.id);
    const stranger = await createClient(other.business.id, { phoneNumber: newPhone() });
    const call = { ...newCall(`client:staff-${agent.id}`, ''), ClientId: String(stranger.id) };
    const answer = await startCall(call);
    expect(answer.twiml!.children.map((c) => c.name)).toEqual(['Say', 'Hangup']);
    expect(findAll(answer.twiml!, 'Dial')).toHaveLength(0);
    expect(await callsBySid(call.CallSid)).toHaveLength(0);
  });

  it('the dial result completes the call with its duration; no-answer ends it no_answer (not a missed call)', async () => {
    const t = await business();
    const agent = await createStaff(t.business.id);
    for (const [dialStatus, expected] of [
      ['completed', 'completed'],
      ['no-answer', 'no_answer'],
    ] as const) {
      const client = await createClient(t.business.id, { phoneNumber: newPhone() });
      const call = newCall(`client:staff-${agent.id}`, client.phoneNumber!);
      const dial = findOne((await startCall(call)).twiml!, 'Dial');
      const after = await followAction(dial, call, {
        DialCallStatus: dialStatus,
        DialCallDuration: dialStatus === 'completed' ? '48' : '0',
        DialCallSid: `CA${'2'.repeat(32)}`,
      });
      expect(after.twiml!.children).toEqual([]);
      expect(await callsBySid(call.CallSid)).toMatchObject([
        { status: expected, direction: 'outbound', callOutcome: null, staffId: agent.id },
      ]);
    }
  });
});

describe('POST /voice-calls/instructions: phone → business', () => {
  async function salon() {
    const t = await business();
    const downtown = await createLocation(t.business.id);
    const uptown = await createLocation(t.business.id);
    const assigned = await createStaff(t.business.id, { locationId: downtown.id });
    const colleague = await createStaff(t.business.id, { locationId: downtown.id });
    const away = await createStaff(t.business.id, { locationId: downtown.id, active: false });
    const elsewhere = await createStaff(t.business.id, { locationId: uptown.id });
    const client = await createClient(t.business.id, { phoneNumber: newPhone(), locationId: downtown.id, name: 'Ana & "Bo"' });
    const conv = await createConversation(t.business.id, client.id, { assignedStaffId: assigned.id, locationId: downtown.id });
    return { ...t, downtown, uptown, assigned, colleague, away, elsewhere, client, conv };
  }

  it('rings the assigned staff member first, with the client as parameters; the call is one inbound CALL in the existing conversation', async () => {
    const s = await salon();
    const call = newCall(s.client.phoneNumber!, s.number);
    const answer = await startCall(call);
    const dial = findOne(answer.twiml!, 'Dial');
    expect(dial.attrs).toMatchObject({ answerOnBridge: 'true', timeout: '20', action: nextStep('assigned') });
    expect(identities(dial)).toEqual([`staff-${s.assigned.id}`]);
    const client = findOne(dial, 'Client');
    expect(client.attrs).toMatchObject({ statusCallback: STATUS_URL, statusCallbackEvent: 'ringing answered completed' });
    expect(Object.fromEntries(findAll(client, 'Parameter').map((p) => [p.attrs.name, p.attrs.value]))).toEqual({
      ClientId: String(s.client.id),
      ConversationId: String(s.conv.id),
      ClientName: 'Ana & "Bo"',
    });
    expect(await callsBySid(call.CallSid)).toMatchObject([
      {
        conversationId: s.conv.id,
        clientId: s.client.id,
        direction: 'inbound',
        senderType: 'client',
        status: 'ringing',
        isRead: false,
        callOutcome: null,
      },
    ]);
    expect(await conversationsOf(s.client.id)).toHaveLength(1);
  });

  it("unanswered, it rings the location's other active staff (and staff of no location), then takes a voicemail and marks the call missed", async () => {
    const s = await salon();
    const floater = await createStaff(s.business.id); // tied to no location: covers every one
    const call = newCall(s.client.phoneNumber!, s.number);
    const first = findOne((await startCall(call)).twiml!, 'Dial');

    const second = await followAction(first, call, { DialCallStatus: 'no-answer', DialCallDuration: '0', CallStatus: 'ringing' });
    const team = findOne(second.twiml!, 'Dial');
    expect(team.attrs).toMatchObject({ action: nextStep('team'), timeout: '20' });
    expect(identities(team).sort()).toEqual([`staff-${s.colleague.id}`, `staff-${floater.id}`, `staff-${s.owner.id}`].sort());
    expect((await callsBySid(call.CallSid))[0]).toMatchObject({ status: 'ringing', callOutcome: null });

    const third = await followAction(team, call, { DialCallStatus: 'no-answer', DialCallDuration: '0', CallStatus: 'ringing' });
    expect(third.twiml!.children.map((c) => c.name)).toEqual(['Say', 'Record']);
    expect(findOne(third.twiml!, 'Say').text).toContain(s.business.name);
    expect(findOne(third.twiml!, 'Record').attrs).toMatchObject({
      action: nextStep('voicemail'),
      recordingStatusCallback: RECORDING_URL,
      recordingStatusCallbackEvent: 'completed absent',
      maxLength: '120',
      playBeep: 'true',
    });
    expect((await callsBySid(call.CallSid))[0]).toMatchObject({ callOutcome: 'missed' });

    const last = await followAction(findOne(third.twiml!, 'Record'), call, {
      RecordingUrl: 'https://api.twilio.com/x',
      RecordingDuration: '9',
      Digits: 'hangup',
    });
    expect(last.twiml!.children).toEqual([]);
    expect(onlyRow(await callsBySid(call.CallSid))).toMatchObject({ status: 'completed', callOutcome: 'missed', staffId: null });
    // The owner is in the team here because the owner is tied to no location (createTenant).
    expect(identities(team)).not.toContain(`staff-${s.elsewhere.id}`);
    expect(identities(team)).not.toContain(`staff-${s.away.id}`);
    expect(identities(team)).not.toContain(`staff-${s.assigned.id}`);
  });

  it('a client with no location: the team is every active staff member of the business but the assigned one', async () => {
    const s = await salon();
    const client = await createClient(s.business.id, { phoneNumber: newPhone() });
    await createConversation(s.business.id, client.id, { assignedStaffId: s.assigned.id });
    const call = newCall(client.phoneNumber!, s.number);
    const first = findOne((await startCall(call)).twiml!, 'Dial');
    const team = findOne((await followAction(first, call, { DialCallStatus: 'busy' })).twiml!, 'Dial');
    expect(identities(team).sort()).toEqual([`staff-${s.owner.id}`, `staff-${s.colleague.id}`, `staff-${s.elsewhere.id}`].sort());
  });

  it('an unknown caller becomes a lead with a conversation; with nobody assigned the team rings at once', async () => {
    const s = await salon();
    const caller = newPhone();
    const call = newCall(caller, s.number);
    const dial = findOne((await startCall(call)).twiml!, 'Dial');
    expect(dial.attrs.action).toBe(nextStep('team'));
    expect(identities(dial)).toContain(`staff-${s.assigned.id}`);
    const [lead] = await db
      .select()
      .from(clients)
      .where(and(eq(clients.businessId, s.business.id), eq(clients.phoneNumber, caller)));
    expect(lead!.clientType).toBe('lead');
    const [conv] = await conversationsOf(lead!.id);
    expect(await callsBySid(call.CallSid)).toMatchObject([
      { clientId: lead!.id, conversationId: conv!.id, direction: 'inbound' },
    ]);
  });

  it('answered: the call completes with the talk time, hangs up, and is not missed', async () => {
    const s = await salon();
    const call = newCall(s.client.phoneNumber!, s.number);
    const dial = findOne((await startCall(call)).twiml!, 'Dial');
    const after = await followAction(dial, call, { DialCallStatus: 'completed', DialCallDuration: '33' });
    expect(after.twiml!.children).toEqual([]);
    expect(await callsBySid(call.CallSid)).toMatchObject([{ status: 'completed', callDurationSeconds: 33, callOutcome: null }]);
  });

  it('the caller hanging up while it rings ends the call as missed, with nothing more to ring', async () => {
    const s = await salon();
    const call = newCall(s.client.phoneNumber!, s.number);
    const dial = findOne((await startCall(call)).twiml!, 'Dial');
    const after = await followAction(dial, call, { DialCallStatus: 'no-answer', CallStatus: 'completed' });
    expect(after.twiml!.children).toEqual([]);
    expect(await callsBySid(call.CallSid)).toMatchObject([{ status: 'completed', callOutcome: 'missed' }]);
  });

  it('a business with no active staff goes straight to voicemail', async () => {
    const t = await business();
    await db.update(businesses).set({ name: 'Quiet Studio' }).where(eq(businesses.id, t.business.id));
    await db.update(staff).set({ active: false }).where(eq(staff.businessId, t.business.id));
    const call = newCall(newPhone(), t.number);
    const answer = await startCall(call);
    expect(answer.twiml!.children.map((c) => c.name)).toEqual(['Say', 'Record']);
    expect(findOne(answer.twiml!, 'Say').text).toContain('Quiet Studio');
    expect(await callsBySid(call.CallSid)).toMatchObject([{ direction: 'inbound', callOutcome: 'missed' }]);
  });

  it('a call to a number no business owns gets an empty response and records nothing', async () => {
    const call = newCall(newPhone(), '+15005550006');
    const answer = await startCall(call);
    expect(answer.status).toBe(200);
    expect(answer.twiml!.children).toEqual([]);
    expect(await callsBySid(call.CallSid)).toHaveLength(0);
  });
});

describe('POST /voice-calls/instructions: signature', () => {
  it('403 without a signature, with a wrong one, or signed for other parameters; nothing recorded', async () => {
    const t = await business();
    const agent = await createStaff(t.business.id);
    const call = newCall(`client:staff-${agent.id}`, newPhone());
    const params = { ...call, CallStatus: 'ringing' };
    for (const options of [
      { signature: null },
      { signature: 'bm90LWEtc2lnbmF0dXJl' },
      { signedParams: { ...params, To: '+15005550001' } },
      { token: 'another-auth-token' },
    ]) {
      const res = await postTwilio(VOICE_PATHS.instructions, params, options);
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ detail: 'Invalid Twilio signature' });
    }
    // The step is part of the signed URL: a signature for the first request does not cover a step.
    const signedForFirst = twilioSignature(VOICE_PATHS.instructions, params);
    expect((await postTwilio(`${VOICE_PATHS.instructions}?step=outbound`, params, { signature: signedForFirst })).status).toBe(
      403,
    );
    expect(await callsBySid(call.CallSid)).toHaveLength(0);
    expect(await db.select().from(messages).where(eq(messages.businessId, t.business.id))).toHaveLength(0);
  });
});

describe('POST /voice-calls/instructions: recording notice', () => {
  /** A business that records calls, a client with a conversation assigned to a staff member. */
  async function recorded(settings: BusinessSettings = { record_calls: true }) {
    const t = await business(settings);
    const agent = await createStaff(t.business.id);
    const client = await createClient(t.business.id, { phoneNumber: newPhone() });
    await createConversation(t.business.id, client.id, { assignedStaffId: agent.id });
    return { ...t, agent, client };
  }

  it('a recorded inbound call says the notice to the caller before the first <Dial>, once: the team ring that follows is recorded without it', async () => {
    const s = await recorded();
    const call = newCall(s.client.phoneNumber!, s.number);
    const first = (await startCall(call)).twiml!;
    expect(verbs(first)).toEqual(['Say', 'Dial']);
    expect(first.children[0]!.text).toBe(DEFAULT_NOTICE);
    const dial = findOne(first, 'Dial');
    expect(dial.attrs).toMatchObject({ record: 'record-from-answer-dual', action: nextStep('assigned') });
    expect(identities(dial)).toEqual([`staff-${s.agent.id}`]);

    const team = (await followAction(dial, call, { DialCallStatus: 'no-answer', CallStatus: 'in-progress' })).twiml!;
    expect(verbs(team)).toEqual(['Dial']);
    expect(findOne(team, 'Dial').attrs).toMatchObject({ record: 'record-from-answer-dual', action: nextStep('team') });
    expect(await callsBySid(call.CallSid)).toMatchObject([{ status: 'ringing', callOutcome: null }]);
  });

  it("a recorded browser call says the notice to the staff member before the <Dial>, and the callee hears it through the <Number>'s url before being connected", async () => {
    const s = await recorded();
    const call = newCall(`client:staff-${s.agent.id}`, s.client.phoneNumber!);
    const answer = (await startCall(call)).twiml!;
    expect(verbs(answer)).toEqual(['Say', 'Dial']);
    expect(answer.children[0]!.text).toBe(DEFAULT_NOTICE);
    const dial = findOne(answer, 'Dial');
    expect(dial.attrs).toMatchObject({ record: 'record-from-answer-dual', callerId: s.number });
    const number = findOne(dial, 'Number');
    expect(number.attrs).toMatchObject({ url: nextStep('notice'), statusCallback: STATUS_URL });

    const callee = await calleeAnswers(dial, number, call);
    expect(callee.status).toBe(200);
    expect(verbs(callee.twiml!)).toEqual(['Say']);
    expect(callee.twiml!.children[0]!.text).toBe(DEFAULT_NOTICE);
    // The callee's leg writes nothing of its own: the call is still the one outbound CALL.
    expect(await callsBySid(call.CallSid)).toMatchObject([{ direction: 'outbound', status: 'ringing' }]);
  });

  it("the business's own wording (trimmed, escaped) is said in both directions and to the callee; blank wording is the default", async () => {
    const wording = 'Calls with "Bloom" & staff are recorded <for quality>.';
    const s = await recorded({ record_calls: true, recording_notice: `  ${wording}\n` });

    const inbound = (await startCall(newCall(s.client.phoneNumber!, s.number))).twiml!;
    expect(verbs(inbound)).toEqual(['Say', 'Dial']);
    expect(inbound.children[0]!.text).toBe(wording);

    const call = newCall(`client:staff-${s.agent.id}`, s.client.phoneNumber!);
    const outbound = (await startCall(call)).twiml!;
    expect(verbs(outbound)).toEqual(['Say', 'Dial']);
    expect(outbound.children[0]!.text).toBe(wording);
    const dial = findOne(outbound, 'Dial');
    const callee = (await calleeAnswers(dial, findOne(dial, 'Number'), call)).twiml!;
    expect(callee.children.map((c) => [c.name, c.text])).toEqual([['Say', wording]]);

    const blank = await recorded({ record_calls: true, recording_notice: '   ' });
    const blankAnswer = (await startCall(newCall(blank.client.phoneNumber!, blank.number))).twiml!;
    expect(blankAnswer.children.map((c) => [c.name, c.text])[0]).toEqual(['Say', DEFAULT_NOTICE]);
  });

  it('without record_calls nothing is said and nothing recorded, whatever the wording: inbound, outbound, and no url for the callee', async () => {
    for (const settings of [{}, { record_calls: false, recording_notice: 'This call may be recorded for training.' }]) {
      const s = await recorded(settings);
      const inbound = (await startCall(newCall(s.client.phoneNumber!, s.number))).twiml!;
      expect(verbs(inbound)).toEqual(['Dial']);
      expect(findOne(inbound, 'Dial').attrs.record).toBeUndefined();

      const outbound = (await startCall(newCall(`client:staff-${s.agent.id}`, s.client.phoneNumber!))).twiml!;
      expect(verbs(outbound)).toEqual(['Dial']);
      expect(findOne(outbound, 'Dial').attrs.record).toBeUndefined();
      expect(findOne(outbound, 'Number').attrs.url).toBeUndefined();
      expect(findAll(outbound, 'Say')).toHaveLength(0);
    }
  });

  it('a voicemail greeting is not preceded by the notice (the caller is leaving a recorded message knowingly)', async () => {
    const t = await business({ record_calls: true });
    await db.update(staff).set({ active: false }).where(eq(staff.businessId, t.business.id));
    const answer = (await startCall(newCall(newPhone(), t.number))).twiml!;
    expect(verbs(answer)).toEqual(['Say', 'Record']);
    expect(findOne(answer, 'Say').text).not.toBe(DEFAULT_NOTICE);
  });

  it("the callee's notice request of a number no business owns any more still says the default notice (the call is recorded)", async () => {
    const res = await postTwilio(`${VOICE_PATHS.instructions}?step=notice`, {
      AccountSid: `AC${'1'.repeat(32)}`,
      CallSid: `CA${'3'.repeat(32)}`,
      ParentCallSid: `CA${'4'.repeat(32)}`,
      From: '+15005550006',
      To: newPhone(),
      Direction: 'outbound-dial',
      CallStatus: 'in-progress',
    });
    expect(res.status).toBe(200);
    expect(verbs(parseTwiml(await res.text()))).toEqual(['Say']);
  });
});
