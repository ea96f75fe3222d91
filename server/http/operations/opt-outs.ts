import { z } from 'zod';
import { ClientDetailsResponse, clientOptOutPath, PossibleOptOutDecision } from '@/server/schemas/businesses';
import { idParam } from '@/server/schemas/common';
import { defineOperation } from '../operation';

/** Opt-outs set by hand and possible opt-outs decided by staff (docs/api.md#opt-out, #possible-opt-outs). */
const common = { auth: 'any' as const, tag: 'business-clients' };

export const optOutClient = defineOperation({
  operationId: 'optOutClient',
  method: 'put',
  path: '/businesses/{business_id}/clients/{client_id}/opt-outs/{channel}',
  summary: "Opt a client's phone number (sms) or email address (email) out",
  description:
    "Every client of the business with that address stops receiving that channel; idempotent. A client without such an address is a 422 at `['path', 'channel']`.",
  params: clientOptOutPath,
  response: ClientDetailsResponse,
  errors: [403, 404],
  ...common,
});

export const optInClient = defineOperation({
  operationId: 'optInClient',
  method: 'delete',
  path: '/businesses/{business_id}/clients/{client_id}/opt-outs/{channel}',
  summary: "Opt a client's phone number or email address back in",
  description:
    'Only when the client asked for it. Removes the opt-out of the address whatever caused it; idempotent. A client without such an address is a 422.',
  params: clientOptOutPath,
  response: ClientDetailsResponse,
  errors: [403, 404],
  ...common,
});

export const decidePossibleOptOut = defineOperation({
  operationId: 'decidePossibleOptOut',
  method: 'post',
  path: '/businesses/{business_id}/conversations/{conversation_id}/possible-opt-out',
  tag: 'businesses',
  summary: "Confirm or dismiss a conversation's possible opt-out",
  description:
    "`confirm` opts the client's phone number out of SMS, `dismiss` keeps it subscribed; both clear `possible_opt_out_message_id` and add a note naming who decided. 409 when nothing (or not `message_id`) is pending.",
  params: z.object({ business_id: idParam, conversation_id: idParam }),
  body: PossibleOptOutDecision,
  response: ClientDetailsResponse,
  errors: [403, 404, 409],
  // It adds a note (a message): a retried request replays its first answer instead of a 409.
  idempotent: true,
  auth: 'any',
});
