import { twilioVoiceStatus as op } from '@/server/http/operations/webhooks';
import { route } from '@/server/http/route';
import { headersWorthKeeping } from '@/server/services/webhooks/events';
import { receiveVoiceStatus } from '@/server/services/webhooks/twilio-voice';

// POST (Twilio-signed, verified by route()): a call status callback; one CALL message per CallSid.
export const POST = route(op, async ({ req, form, rawBytes, tx }) => {
  await receiveVoiceStatus(form.params, headersWorthKeeping(req), form.cleaned ? rawBytes : null, tx);
  return new Response(null, { status: 200 });
});
