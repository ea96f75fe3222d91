import { eq } from 'drizzle-orm';
import { db } from '@/server/db/client';
import { messages } from '@/db/schema';
import { parseTwiml, type TwimlNode } from './twiml';
import { postTwilio, TEST_BASE_URL, twilioSid, type TwilioParams } from './webhooks';

/**
 * Tests that play Twilio Voice: the instructions requests of a call (following our own action
 * URLs, as Twilio does), its status callbacks and its recording callbacks, all signed.
 */
export const VOICE_PATHS = {
  instructions: '/api/v1/voice-calls/instructions',
  status: '/api/v1/webhooks/twilio/voice/status',
  recording: '/api/v1/webhooks/twilio/voice/recording',
} as const;

const ACCOUNT = { AccountSid: `AC${'1'.repeat(32)}`, ApiVersion: '2010-04-01' };

/** What identifies a call on every request Twilio makes about it. */
export type TestCall = { CallSid: string; From: string; To: string };

export const newCall = (From: string, To: string): TestCall => ({ CallSid: twilioSid('CA'), From, To });

type Instructions = { status: number; body: string; twiml: TwimlNode | null };

async function answerOf(res: Response): Promise<Instructions> {
  const body = await res.text();
  return { status: res.status, body, twiml: res.status === 200 ? parseTwiml(body) : null };
}

/** The first request of a call (the number's or the TwiML app's Voice URL). */
export async function startCall(call: TestCall, extra: TwilioParams = {}): Promise<Instructions> {
  const res = await postTwilio(VOICE_PATHS.instructions, {
    ...ACCOUNT,
    Direction: 'inbound',
    CallStatus: 'ringing',
    ...call,
    ...extra,
  });
  return answerOf(res);
}

/** Twilio requesting a <Dial>'s or <Record>'s action URL when that verb ends. */
export async function followAction(verb: TwimlNode, call: TestCall, extra: TwilioParams = {}): Promise<Instructions> {
  const action = verb.attrs.action ?? '';
  if (!action.startsWith(`${TEST_BASE_URL}/`)) throw new Error(`<${verb.name}> has no action on ${TEST_BASE_URL}: ${action}`);
  const res = await postTwilio(action.slice(TEST_BASE_URL.length), {
    ...ACCOUNT,
    Direction: 'inbound',
    CallStatus: 'in-progress',
    ...call,
    ...extra,
  });
  return answerOf(res);
}

/**
 * The callee of a <Dial> answering a <Number> that has a `url`: Twilio requests it on the dialled
 * leg (its own CallSid, ParentCallSid the caller's; From the <Dial>'s callerId, To the number).
 */
export async function calleeAnswers(dial: TwimlNode, number: TwimlNode, parent: TestCall): Promise<Instructions> {
  const url = number.attrs.url ?? '';
  if (!url.startsWith(`${TEST_BASE_URL}/`)) throw new Error(`<Number> has no url on ${TEST_BASE_URL}: ${url}`);
  const res = await postTwilio(url.slice(TEST_BASE_URL.length), {
    ...ACCOUNT,
    CallSid: twilioSid('CA'),
    ParentCallSid: parent.CallSid,
    From: dial.attrs.callerId ?? '',
    To: number.text,
    Direction: 'outbound-dial',
    CallStatus: 'in-progress',
  });
  return answerOf(res);
}

/** A status callback of a call leg (a dialled leg carries `ParentCallSid`). */
export const callStatus = (leg: TestCall & { ParentCallSid?: string }, CallStatus: string, extra: TwilioParams = {}) =>
  postTwilio(VOICE_PATHS.status, {
    ...ACCOUNT,
    CallbackSource: 'call-progress-events',
    Direction: leg.ParentCallSid ? 'outbound-dial' : 'inbound',
    ...leg,
    CallStatus,
    ...extra,
  });

export const recordingUrl = (recordingSid: string) =>
  `https://api.twilio.com/2010-04-01/Accounts/${ACCOUNT.AccountSid}/Recordings/${recordingSid}`;

/** A recording status callback for the call `CallSid`. */
export function recordingCallback(CallSid: string, extra: TwilioParams = {}) {
  const RecordingSid = extra.RecordingSid ?? twilioSid('RE');
  return postTwilio(VOICE_PATHS.recording, {
    ...ACCOUNT,
    CallSid,
    RecordingSid,
    RecordingUrl: recordingUrl(RecordingSid),
    RecordingStatus: 'completed',
    RecordingDuration: '12',
    RecordingChannels: '1',
    RecordingSource: 'RecordVerb',
    ...extra,
  });
}

export const callsBySid = (callSid: string) => db.select().from(messages).where(eq(messages.providerMessageId, callSid));
