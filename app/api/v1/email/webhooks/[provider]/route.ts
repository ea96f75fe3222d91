import { emailProviderEvents as op } from '@/server/http/operations/webhooks';
import { route } from '@/server/http/route';
import { AppError } from '@/server/errors';
import { headersWorthKeeping } from '@/server/services/webhooks/events';
import { handleSendgridEvents } from '@/server/services/webhooks/sendgrid-events';

// POST: the email provider's event webhook (SendGrid: a signed JSON array of events).
// Verified by route() before anything reads the body: an unsigned request is a 403 whatever it holds.
export const POST = route(op, async ({ req, rawBytes, rawBody, tx }) => {
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    throw new AppError('bad_request', 'Request body is not valid JSON');
  }
  if (!Array.isArray(body)) throw AppError.invalid(['body'], 'must be a JSON array of events', 'list_type');
  return handleSendgridEvents(body, headersWorthKeeping(req), rawBytes, tx);
});
