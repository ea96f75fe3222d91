import { twilioVoiceStatus as op } from '@/server/http/operations/webhooks';
import { route } from '@/server/http/route';
import { param, verifyTwilioSignature } from '@/server/providers/twilio-signature';
import { headersWorthKeeping, processOrRetry, storeEvent } from '@/server/services/webhooks/events';
import { processVoiceStatus } from '@/server/services/webhooks/twilio-voice';

// POST (Twilio-signed): a call status callback; one CALL message per CallSid.
export const POST = route(op, async ({ req, rawBody, rawBytes }) => {
  const { params, cleaned } = verifyTwilioSignature(req, rawBody);
  const callSid = param(params, 'CallSid');
  if (callSid) {
    const dedupeKey = [callSid, param(params, 'CallStatus'), param(params, 'SequenceNumber'), param(params, 'RecordingSid')].join(
      ':',
    );
    const eventId = await storeEvent({
      provider: 'twilio',
      kind: 'voice_status',
      dedupeKey,
      headers: headersWorthKeeping(req),
      payload: params,
      rawBody: cleaned ? rawBytes : null,
    });
    if (eventId !== null) await processOrRetry(eventId, 'voice_status', () => processVoiceStatus(eventId, params));
  }
  return new Response(null, { status: 200 });
});
