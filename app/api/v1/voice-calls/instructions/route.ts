import { callInstructions as op } from '@/server/http/operations/voice';
import { route } from '@/server/http/route';
import { verifyTwilioSignature } from '@/server/providers/twilio-signature';
import { callInstructions } from '@/server/services/voice/instructions';

// POST (Twilio-signed): what a call does next, as TwiML.
export const POST = route(op, async ({ req, rawBody, query }) => {
  const { params } = verifyTwilioSignature(req, rawBody);
  return new Response(await callInstructions(params, query.step), { status: 200, headers: { 'Content-Type': 'text/xml' } });
});
