import { z } from 'zod';
import { DialerToken, DialerTokenQuery, InstructionsQuery } from '@/server/schemas/voice';
import { defineOperation } from '../operation';
import { TWILIO_WEBHOOK_MAX_BYTES } from '@/server/providers/twilio-signature';

const TwilioVoiceForm = z
  .object({
    CallSid: z.string(),
    AccountSid: z.string().optional(),
    From: z.string().optional(),
    To: z.string().optional(),
    CallStatus: z.string().optional(),
  })
  .loose()
  .meta({
    description: 'Twilio voice webhook parameters, form-encoded; every posted parameter is covered by X-Twilio-Signature.',
  });

export const getDialerToken = defineOperation({
  operationId: 'getDialerToken',
  method: 'get',
  path: '/voice-calls/token',
  tag: 'voice-calls',
  summary: 'Get dialer token',
  description:
    'A one-hour Twilio access token for the browser dialer, identity `staff-<staff_id>`. With a session: its own staff member. With an API key: `business_id` and `staff_id` (an active staff member of that business; 422 otherwise). 503 when voice is not configured (TWILIO_ACCOUNT_SID, TWILIO_API_KEY_SID, TWILIO_API_KEY_SECRET, TWILIO_TWIML_APP_SID).',
  auth: 'any',
  query: DialerTokenQuery,
  response: DialerToken,
  errors: [403, 503],
});

export const callInstructions = defineOperation({
  operationId: 'callInstructions',
  method: 'post',
  path: '/voice-calls/instructions',
  tag: 'voice-calls',
  summary: 'Call instructions (TwiML)',
  description:
    "The TwiML app's and the business numbers' Voice URL, verified by X-Twilio-Signature (403 otherwise). A browser call (`From=client:staff-<id>`, `To` and/or `ClientId`) is dialled from the business's default number; an inbound call rings the assigned staff member, then the team, then takes a voicemail. A business with `settings.record_calls` records the call, and its `recording_notice` is said first: to the caller before the first `<Dial>`, and to the callee of a browser call through the `<Number>`'s url (`step=notice`) before they are connected. A caller identity that is no active staff member gets `<Reject/>`. Each call is one CALL message in the client's conversation.",
  auth: 'webhook',
  verifiedBy: 'twilio-signature',
  query: InstructionsQuery,
  bodyType: 'application/x-www-form-urlencoded',
  maxBodyBytes: TWILIO_WEBHOOK_MAX_BYTES,
  docBody: TwilioVoiceForm,
  responseType: 'text/xml',
  response: z.string(),
  errors: [403, 413],
});

export const twilioVoiceRecording = defineOperation({
  operationId: 'twilioVoiceRecording',
  method: 'post',
  path: '/webhooks/twilio/voice/recording',
  tag: 'telephony webhooks',
  summary: 'Attach a call recording or voicemail',
  description:
    "Recording status callback: verified, stored, deduplicated by (RecordingSid, RecordingStatus); a `completed` recording's URL is stored on the call's CALL message, and a recording of an unanswered inbound call marks it `voicemail`.",
  auth: 'webhook',
  verifiedBy: 'twilio-signature',
  bodyType: 'application/x-www-form-urlencoded',
  maxBodyBytes: TWILIO_WEBHOOK_MAX_BYTES,
  docBody: TwilioVoiceForm,
  errors: [403, 413],
});
