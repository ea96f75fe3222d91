import { AuthParameters, AuthTokenResponse, SessionExpiryRequest } from '@/server/schemas/auth';
import { UpdateSuccessResponse } from '@/server/schemas/common';
import { defineOperation } from '../operation';

export const generateAuthToken = defineOperation({
  operationId: 'generateAuthToken',
  method: 'post',
  path: '/auth/token',
  tag: 'authentication',
  summary: 'Generate auth token',
  description:
    'A staff session for the inbox. A business key may only ask for its own business (403 otherwise); a staff member not in the business is a 422. ' +
    'At most `AUTH_TOKENS_PER_BUSINESS_PER_MINUTE` (default 60) sessions are created per business per minute, whoever asks: 429 with `Retry-After` past it. ' +
    "Every session's requests count against its own rate limit and its business's.",
  auth: 'api_key',
  body: AuthParameters,
  response: AuthTokenResponse,
  errors: [401, 403, 422],
});

export const expireSession = defineOperation({
  operationId: 'expireSession',
  method: 'post',
  path: '/session/expire',
  tag: 'session',
  summary: 'Expire session',
  description: 'With an API key `access_token` is required; with a session, omitting it expires the calling session.',
  auth: 'any',
  body: SessionExpiryRequest,
  response: UpdateSuccessResponse,
  errors: [401, 403, 422],
});
