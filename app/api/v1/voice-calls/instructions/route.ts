import { callInstructions as op } from '@/server/http/operations/voice';
import { route } from '@/server/http/route';
import { callInstructions } from '@/server/services/voice/instructions';

// POST (Twilio-signed, verified by route()): what a call does next, as TwiML.
export const POST = route(op, async ({ form, query, tx }) => {
  return new Response(await callInstructions(form.params, query.step, tx), {
    status: 200,
    headers: { 'Content-Type': 'text/xml' },
  });
});
