import VoiceResponse from 'twilio/lib/twiml/VoiceResponse';
import { env } from '@/server/env';
import type { InstructionStep } from '@/server/schemas/voice';
import { dialerIdentity } from './token';

/**
 * The TwiML documents of a call (docs/providers.md#twiml-and-ringing), built with the twilio package's builder (it
 * escapes every value). Callback URLs are absolute on PUBLIC_BASE_URL, the origin their signatures
 * are verified against.
 */

/** Seconds each ring group rings before the call moves on (Twilio's own default is 30). */
const RING_SECONDS = 20;
/** Longest voicemail, in seconds. */
const VOICEMAIL_SECONDS = 120;
/** Twilio rings at most 10 <Client> nouns of one <Dial>. */
export const MAX_RING_GROUP = 10;

const url = (path: string) => `${env().publicBaseUrl}/api/v1${path}`;
const nextStepUrl = (step: InstructionStep) => url(`/voice-calls/instructions?step=${step}`);
const STATUS_CALLBACK = () => url('/webhooks/twilio/voice/status');
const RECORDING_CALLBACK = () => url('/webhooks/twilio/voice/recording');

/** Dial recording when the business records calls (`settings.record_calls`): both parties, from the answer. */
const recording = (record: boolean) =>
  record
    ? {
        record: 'record-from-answer-dual' as const,
        recordingStatusCallback: RECORDING_CALLBACK(),
        recordingStatusCallbackEvent: ['completed' as const],
      }
    : {};

/** Refuses the call before it is answered: the caller is billed nothing and hears a busy tone. */
export function rejectCall(): string {
  const response = new VoiceResponse();
  response.reject();
  return response.toString();
}

/** Nothing more to do: Twilio ends the call. */
export function endCall(): string {
  return new VoiceResponse().toString();
}

export function sayAndHangUp(text: string): string {
  const response = new VoiceResponse();
  response.say(text);
  response.hangup();
  return response.toString();
}

/**
 * A browser call to a phone: from the business's number, ringing the browser until the callee
 * answers. A recorded call (`recordingNotice` set) says the notice to the staff member first, and
 * the <Number>'s `url` has the callee hear it too, after answering and before being connected.
 */
export function dialNumber(input: { callerId: string; number: string; recordingNotice: string | null }): string {
  const response = new VoiceResponse();
  const notice = input.recordingNotice;
  const record = notice !== null;
  if (notice !== null) response.say(notice);
  const dial = response.dial({
    callerId: input.callerId,
    answerOnBridge: true,
    action: nextStepUrl('outbound'),
    ...recording(record),
  });
  dial.number(
    {
      ...(record ? { url: nextStepUrl('notice') } : {}),
      statusCallback: STATUS_CALLBACK(),
      statusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
    },
    input.number,
  );
  return response.toString();
}

/** What the callee of a recorded browser call hears once they answer; the call is connected when it ends. */
export function calleeNotice(text: string): string {
  const response = new VoiceResponse();
  response.say(text);
  return response.toString();
}

/**
 * Rings staff browsers at once (the first to accept wins), then asks for `next`. Each ring carries
 * the client, so the dialer can show who is calling without a lookup. `notice` (the recording
 * notice, on a recorded call's first ring) is said to the caller before anyone is rung.
 */
export function dialStaff(input: {
  staffIds: number[];
  next: InstructionStep;
  record: boolean;
  notice: string | null;
  client: { id: number; name: string | null; conversationId: number } | null;
}): string {
  const response = new VoiceResponse();
  if (input.notice !== null) response.say(input.notice);
  const dial = response.dial({
    answerOnBridge: true,
    timeout: RING_SECONDS,
    action: nextStepUrl(input.next),
    ...recording(input.record),
  });
  for (const staffId of input.staffIds.slice(0, MAX_RING_GROUP)) {
    const client = dial.client({ statusCallback: STATUS_CALLBACK(), statusCallbackEvent: ['ringing', 'answered', 'completed'] });
    client.identity(dialerIdentity(staffId));
    if (input.client) {
      client.parameter({ name: 'ClientId', value: String(input.client.id) });
      client.parameter({ name: 'ConversationId', value: String(input.client.conversationId) });
      if (input.client.name) client.parameter({ name: 'ClientName', value: input.client.name });
    }
  }
  return response.toString();
}

/** Nobody answered: a greeting, then the caller's message (the recording arrives by callback). */
export function voicemail(businessName: string): string {
  const response = new VoiceResponse();
  response.say(`Sorry, nobody at ${businessName} can take your call right now. Please leave a message after the tone.`);
  response.record({
    action: nextStepUrl('voicemail'),
    maxLength: VOICEMAIL_SECONDS,
    playBeep: true,
    trim: 'trim-silence',
    recordingStatusCallback: RECORDING_CALLBACK(),
    recordingStatusCallbackEvent: ['completed', 'absent'],
  });
  return response.toString();
}
