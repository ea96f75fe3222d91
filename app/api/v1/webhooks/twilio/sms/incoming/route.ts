import { twilioSmsIncoming as op } from '@/server/http/operations/webhooks';
import { route } from '@/server/http/route';
import { headersWorthKeeping } from '@/server/services/webhooks/events';
import { receiveInboundSms } from '@/server/services/webhooks/twilio-inbound';

const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';

// POST (Twilio-signed, verified by route()): a client's SMS reply. Stored, then processed; always empty TwiML.
export const POST = route(op, async ({ req, form, rawBytes, tx }) => {
  await receiveInboundSms(form.params, headersWorthKeeping(req), form.cleaned ? rawBytes : null, tx);
  return new Response(EMPTY_TWIML, { status: 200, headers: { 'Content-Type': 'text/xml' } });
});
