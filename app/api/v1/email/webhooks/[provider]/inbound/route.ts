import { AppError } from '@/server/errors';
import { emailProviderInbound as op } from '@/server/http/operations/webhooks';
import { route } from '@/server/http/route';
import { headersWorthKeeping } from '@/server/services/webhooks/events';
import { handleInboundEmail, parseInboundForm } from '@/server/services/webhooks/email-inbound';

// POST: Inbound Parse (unsigned, so a shared secret in the URL authenticates it; checked by route()).
export const POST = route(op, async ({ req, rawBytes, tx }) => {
  const contentType = req.headers.get('content-type') ?? '';
  if (!contentType.startsWith('multipart/form-data'))
    throw new AppError('bad_request', 'Content-Type must be multipart/form-data');
  const mail = await parseInboundForm(rawBytes, contentType).catch(() => {
    throw new AppError('bad_request', 'Malformed multipart body');
  });
  return handleInboundEmail(mail, headersWorthKeeping(req), rawBytes, tx);
});
