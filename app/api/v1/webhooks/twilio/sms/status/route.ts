import { twilioSmsStatus as op } from '@/server/http/operations/webhooks';
import { route } from '@/server/http/route';
import { verifyTwilioSignature } from '@/server/providers/twilio-signature';
import { headersWorthKeeping } from '@/server/services/webhooks/events';
import { handleSmsStatusCallback } from '@/server/services/webhooks/twilio-status';

// POST (Twilio-signed): an SMS status callback; verify + one statement, empty 200.
export const POST = route(op, async ({ req, rawBody, rawBytes }) => {
  const { params, cleaned } = verifyTwilioSignature(req, rawBody);
  await handleSmsStatusCallback(params, headersWorthKeeping(req), cleaned ? rawBytes : null);
  return new Response(null, { status: 200 });
});
