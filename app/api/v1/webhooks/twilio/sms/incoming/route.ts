import { twilioSmsIncoming as op } from '@/server/http/operations/webhooks';
import { route } from '@/server/http/route';
import { param, verifyTwilioSignature } from '@/server/providers/twilio-signature';
import { headersWorthKeeping, processOrRetry, storeEvent } from '@/server/services/webhooks/events';
import { processInboundSms } from '@/server/services/webhooks/twilio-inbound';

const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';

// POST (Twilio-signed): a client's SMS reply. Stored, then processed; always empty TwiML.
export const POST = route(op, async ({ req, rawBody, rawBytes }) => {
  const { params, cleaned } = verifyTwilioSignature(req, rawBody);
  const sid = param(params, 'MessageSid') ?? param(params, 'SmsMessageSid') ?? param(params, 'SmsSid');
  if (sid) {
    const eventId = await storeEvent({
      provider: 'twilio',
      kind: 'sms_incoming',
      dedupeKey: sid,
      headers: headersWorthKeeping(req),
      payload: params,
      rawBody: cleaned ? rawBytes : null,
    });
    if (eventId !== null) await processOrRetry(eventId, 'sms_incoming', () => processInboundSms(eventId, params));
  }
  return new Response(EMPTY_TWIML, { status: 200, headers: { 'Content-Type': 'text/xml' } });
});
