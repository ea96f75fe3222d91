import { twilioVoiceRecording as op } from '@/server/http/operations/voice';
import { route } from '@/server/http/route';
import { headersWorthKeeping } from '@/server/services/webhooks/events';
import { receiveRecordingStatus } from '@/server/services/webhooks/twilio-voice';

// POST (Twilio-signed, verified by route()): a recording status callback; the recording URL goes on the call's CALL message.
export const POST = route(op, async ({ req, form, rawBytes, tx }) => {
  await receiveRecordingStatus(form.params, headersWorthKeeping(req), form.cleaned ? rawBytes : null, tx);
  return new Response(null, { status: 200 });
});
