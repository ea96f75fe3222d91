import { twilioVoiceRecording as op } from '@/server/http/operations/voice';
import { route } from '@/server/http/route';
import { param, verifyTwilioSignature } from '@/server/providers/twilio-signature';
import { processRecording } from '@/server/services/voice/recording';
import { headersWorthKeeping, processOrRetry, storeEvent } from '@/server/services/webhooks/events';

// POST (Twilio-signed): a recording status callback; the recording URL goes on the call's CALL message.
export const POST = route(op, async ({ req, rawBody, rawBytes }) => {
  const { params, cleaned } = verifyTwilioSignature(req, rawBody);
  const recordingSid = param(params, 'RecordingSid');
  if (recordingSid) {
    const dedupeKey = `${recordingSid}:${param(params, 'RecordingStatus') ?? ''}`;
    const eventId = await storeEvent({
      provider: 'twilio',
      kind: 'voice_recording',
      dedupeKey,
      headers: headersWorthKeeping(req),
      payload: params,
      rawBody: cleaned ? rawBytes : null,
    });
    if (eventId !== null) await processOrRetry(eventId, 'voice_recording', () => processRecording(eventId, params));
  }
  return new Response(null, { status: 200 });
});
