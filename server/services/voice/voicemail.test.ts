import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { businesses, messages, webhookEvents } from '@/db/schema';
import { reprocessEvent } from '@/server/services/webhooks/retry';
import {
  createClient,
  createConversation,
  createMessage,
  createSmsNumber,
  createStaff,
  createTenant,
} from '@/server/testing/factories';
import { findOne } from '@/server/testing/twiml';
import {
  callsBySid,
  callStatus,
  followAction,
  newCall,
  recordingCallback,
  recordingUrl,
  startCall,
  VOICE_PATHS,
  type TestCall,
} from '@/server/testing/voice';
import { jobsWhere, postTwilio, twilioSid } from '@/server/testing/webhooks';
import { onlyRow } from '@/server/testing/messages';

let phoneCounter = 0;
const newPhone = () => `+1917${String(Date.now() % 1e4).padStart(4, '0')}${String(++phoneCounter).padStart(3, '0')}`;

const TEXT = 'Sorry we missed your call! Reply here and we will get back to you.';

async function setup(settings: { record_calls?: boolean; missed_call_text?: string | null } = {}, timezone = 'America/New_York') {
  const t = await createTenant();
  await db.update(businesses).set({ settings, timezone }).where(eq(businesses.id, t.business.id));
  const number = (await createSmsNumber(t.business.id)).phoneNumber;
  const agent = await createStaff(t.business.id);
  const client = await createClient(t.business.id, { phoneNumber: newPhone() });
  const conv = await createConversation(t.business.id, client.id, { assignedStaffId: agent.id });
  return { ...t, number, agent, client, conv };
}

/** An inbound call nobody answers, played to the voicemail greeting: the call and its <Record>. */
async function callToVoicemail(s: { number: string; client: { phoneNumber: string | null } }) {
  const call = newCall(s.client.phoneNumber!, s.number);
  const assigned = findOne((await startCall(call)).twiml!, 'Dial');
  const team = findOne(
    (await followAction(assigned, call, { DialCallStatus: 'no-answer', CallStatus: 'ringing' })).twiml!,
    'Dial',
  );
  const record = findOne(
    (await followAction(team, call, { DialCallStatus: 'no-answer', CallStatus: 'ringing' })).twiml!,
    'Record',
  );
  return { call, record };
}

const recordingEvents = (callSid: string) =>
  db
    .select()
    .from(webhookEvents)
    .where(and(eq(webhookEvents.kind, 'voice_recording'), sql`${webhookEvents.payload}->>'CallSid' = ${callSid}`));

/** The missed-call texts of a conversation: outbound SMS carrying the call they answer. */
const missedCallTexts = (conversationId: number) =>
  db
    .select()
    .from(messages)
    .where(
      and(
        eq(messages.conversationId, conversationId),
        eq(messages.messageType, 'TEXT'),
        sql`${messages.providerMetadata}->>'missed_call_sid' is not null`,
      ),
    );

describe('POST /webhooks/twilio/voice/recording', () => {
  it("a voicemail's recording goes on the call, which becomes a voicemail; a duplicate callback changes nothing", async () => {
    const s = await setup();
    const { call, record } = await callToVoicemail(s);
    await followAction(record, call, { RecordingDuration: '12', Digits: 'hangup' });
    const recordingSid = twilioSid('RE');
    expect((await recordingCallback(call.CallSid, { RecordingSid: recordingSid })).status).toBe(200);
    expect((await recordingCallback(call.CallSid, { RecordingSid: recordingSid })).status).toBe(200);

    expect(onlyRow(await callsBySid(call.CallSid))).toMatchObject({
      direction: 'inbound',
      status: 'completed',
      callOutcome: 'voicemail',
      recordingUrl: recordingUrl(recordingSid),
    });
    const events = await recordingEvents(call.CallSid);
    expect(events.map((e) => e.outcome)).toEqual(['processed']);
  });

  it('the recording of an answered, recorded call is attached and the call stays answered', async () => {
    const s = await setup({ record_calls: true });
    const call = newCall(s.client.phoneNumber!, s.number);
    const dial = findOne((await startCall(call)).twiml!, 'Dial');
    expect(dial.attrs.record).toBe('record-from-answer-dual');
    await followAction(dial, call, { DialCallStatus: 'completed', DialCallDuration: '60' });
    const recordingSid = twilioSid('RE');
    await recordingCallback(call.CallSid, { RecordingSid: recordingSid, RecordingSource: 'DialVerb', RecordingChannels: '2' });
    expect(await callsBySid(call.CallSid)).toMatchObject([
      { status: 'completed', callOutcome: null, recordingUrl: recordingUrl(recordingSid) },
    ]);
  });

  it('an absent recording (nothing said) keeps the call missed, with no recording', async () => {
    const s = await setup();
    const { call } = await callToVoicemail(s);
    await recordingCallback(call.CallSid, { RecordingStatus: 'absent', RecordingDuration: '0' });
    expect(await callsBySid(call.CallSid)).toMatchObject([{ callOutcome: 'missed', recordingUrl: null }]);
    expect((await recordingEvents(call.CallSid)).map((e) => e.outcome)).toEqual(['ignored']);
  });

  it('403 when unsigned or tampered with; nothing stored', async () => {
    const s = await setup();
    const { call } = await callToVoicemail(s);
    const params = {
      CallSid: call.CallSid,
      RecordingSid: twilioSid('RE'),
      RecordingUrl: recordingUrl('RE1'),
      RecordingStatus: 'completed',
    };
    expect((await postTwilio(VOICE_PATHS.recording, params, { signature: null })).status).toBe(403);
    expect(
      (await postTwilio(VOICE_PATHS.recording, params, { signedParams: { ...params, RecordingUrl: recordingUrl('RE2') } }))
        .status,
    ).toBe(403);
    expect(await recordingEvents(call.CallSid)).toHaveLength(0);
    expect(await callsBySid(call.CallSid)).toMatchObject([{ recordingUrl: null, callOutcome: 'missed' }]);
  });

  it('a recording of a call not recorded yet is kept and retried by the webhook retry job; the last attempt closes it ignored', async () => {
    const callSid = twilioSid('CA');
    expect((await recordingCallback(callSid)).status).toBe(200);
    const [event] = await recordingEvents(callSid);
    expect(event!.outcome).toBe('failed');
    expect(await jobsWhere('webhook.retry', 'eventId', event!.id)).toHaveLength(1);
    await expect(reprocessEvent(event!.id, false)).rejects.toThrow(/No call has CallSid/);
    await reprocessEvent(event!.id, true);
    expect((await recordingEvents(callSid))[0]!.outcome).toBe('ignored');
  });
});

describe('missed-call text', () => {
  it("a voicemail sends the business's text once, through the SMS queue, whatever callbacks follow; a second missed call the same day sends nothing", async () => {
    const s = await setup({ missed_call_text: TEXT });
    const { call, record } = await callToVoicemail(s);
    await followAction(record, call, { Digits: 'hangup' });
    await recordingCallback(call.CallSid);
    await callStatus({ ...call }, 'completed', { CallDuration: '40' });

    const texts = await missedCallTexts(s.conv.id);
    expect(texts).toHaveLength(1);
    expect(texts[0]).toMatchObject({
      clientId: s.client.id,
      channel: 'sms',
      direction: 'outbound',
      senderType: 'system',
      category: 'transactional',
      content: TEXT,
      toAddress: s.client.phoneNumber,
      fromAddress: s.number,
      status: 'queued',
      providerMetadata: { missed_call_sid: call.CallSid },
    });
    // Queued with its send job, like POST /sms: the worker sends it exactly once.
    expect(await jobsWhere('sms.send', 'messageId', texts[0]!.id)).toHaveLength(1);

    const second = newCall(s.client.phoneNumber!, s.number);
    await callStatus({ ...second }, 'ringing');
    await callStatus({ ...second }, 'no-answer');
    expect((await callsBySid(second.CallSid))[0]).toMatchObject({ callOutcome: 'missed' });
    expect(await missedCallTexts(s.conv.id)).toHaveLength(1);
  });

  it('concurrent missed calls from one client send one text', async () => {
    const s = await setup({ missed_call_text: TEXT });
    const calls: TestCall[] = Array.from({ length: 4 }, () => newCall(s.client.phoneNumber!, s.number));
    const answers = await Promise.all(calls.map((c) => callStatus({ ...c }, 'no-answer')));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(await missedCallTexts(s.conv.id)).toHaveLength(1);
  });

  it('missed calls from more clients at once than the pool has connections all get their text (no pool starvation)', async () => {
    const s = await setup({ missed_call_text: TEXT });
    // More concurrent texts than server/db/client.ts's 10 pooled connections: each held one and waited for a second.
    const clients = await Promise.all(Array.from({ length: 12 }, () => createClient(s.business.id, { phoneNumber: newPhone() })));
    const calls: TestCall[] = clients.map((c) => newCall(c.phoneNumber!, s.number));
    const answered = Promise.all(calls.map((c) => callStatus({ ...c }, 'no-answer')));
    const hung = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('missed-call texts hung: pool starved')), 15_000).unref(),
    );
    const answers = await Promise.race([answered, hung]);
    expect(answers.map((a) => a.status)).toEqual(calls.map(() => 200));
    const texts = await db
      .select({ clientId: messages.clientId })
      .from(messages)
      .where(and(eq(messages.businessId, s.business.id), sql`${messages.providerMetadata}->>'missed_call_sid' is not null`));
    expect(texts.map((m) => m.clientId).sort()).toEqual(clients.map((c) => c.id).sort());
  });

  it("nothing is sent when the setting is off, for an answered call, or for a staff member's unanswered outbound call", async () => {
    const off = await setup({ missed_call_text: null });
    await callToVoicemail(off);
    expect(await missedCallTexts(off.conv.id)).toHaveLength(0);

    const s = await setup({ missed_call_text: TEXT });
    const answered = newCall(s.client.phoneNumber!, s.number);
    const dial = findOne((await startCall(answered)).twiml!, 'Dial');
    await followAction(dial, answered, { DialCallStatus: 'completed', DialCallDuration: '20' });
    const outbound = newCall(`client:staff-${s.agent.id}`, s.client.phoneNumber!);
    const outDial = findOne((await startCall(outbound)).twiml!, 'Dial');
    await followAction(outDial, outbound, { DialCallStatus: 'no-answer' });
    expect(await missedCallTexts(s.conv.id)).toHaveLength(0);
  });

  it('"once a day" is the business\'s day: a text just before its local midnight does not stop today\'s, one just after does', async () => {
    // UTC+14: the business's day and the UTC day differ for most of every UTC day.
    const tz = 'Pacific/Kiritimati';
    const localMidnight = sql`date_trunc('day', now() at time zone ${tz}) at time zone ${tz}`;
    const [elapsed] = await db.execute<{ minutes: number }>(
      sql`select (extract(epoch from now() - ${localMidnight}) / 60)::int as minutes`,
    );
    if (elapsed!.minutes < 2) return; // the first two local minutes of a day: nothing fits "just after" midnight yet

    const yesterday = await setup({ missed_call_text: TEXT }, tz);
    await createMessage(yesterday.conv, {
      sentAt: sql`${localMidnight} - interval '1 minute'` as unknown as Date,
      providerMetadata: { missed_call_sid: twilioSid('CA') },
    });
    await callStatus({ ...newCall(yesterday.client.phoneNumber!, yesterday.number) }, 'no-answer');
    expect(await missedCallTexts(yesterday.conv.id)).toHaveLength(2);

    const today = await setup({ missed_call_text: TEXT }, tz);
    await createMessage(today.conv, {
      sentAt: sql`${localMidnight} + interval '1 minute'` as unknown as Date,
      providerMetadata: { missed_call_sid: twilioSid('CA') },
    });
    await callStatus({ ...newCall(today.client.phoneNumber!, today.number) }, 'no-answer');
    expect(await missedCallTexts(today.conv.id)).toHaveLength(1);
  });
});
