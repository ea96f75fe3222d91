import { twilioSmsStatus as op } from '@/server/http/operations/webhooks';
import { route } from '@/server/http/route';
import { headersWorthKeeping } from '@/server/services/webhooks/events';
import { handleSmsStatusCallback } from '@/server/services/webhooks/twilio-status';

// POST (Twilio-signed, verified by route()): an SMS status callback; one statement, empty 200.
export const POST = route(op, async ({ req, form, rawBytes }) => {
  await handleSmsStatusCallback(form.params, headersWorthKeeping(req), form.cleaned ? rawBytes : null);
  return new Response(null, { status: 200 });
});
