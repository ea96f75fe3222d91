import { z } from 'zod';
import { ClientDetailsResponse, clientOptOutPath, PossibleOptOutDecision } from '@/server/schemas/businesses';
import { idParam } from '@/server/schemas/common';
import { ClientOptOutHistory, OptInRequest } from '@/server/schemas/opt-outs';
import { defineOperation } from '../operation';

/** Opt-outs set by hand, their history, and possible opt-outs decided by staff (docs/api.md#opt-out, #possible-opt-outs). */
const common = { auth: 'any' as const, tag: 'business-clients' };

export const getClientOptOuts = defineOperation({
  operationId: 'getClientOptOuts',
  method: 'get',
  path: '/businesses/{business_id}/clients/{client_id}/opt-outs',
  summary: "A client's opt-outs: whether each address is opted out, and its history of opt-outs and opt-ins",
  description:
    "The records of the client's current phone number (sms) and email address (email), newest first, up to 200: who (staff_id), when, how (source), why (note, message_id).",
  params: z.object({ business_id: idParam, client_id: idParam }),
  response: ClientOptOutHistory,
  errors: [403, 404],
  ...common,
});

export const optOutClient = defineOperation({
  operationId: 'optOutClient',
  method: 'put',
  path: '/businesses/{business_id}/clients/{client_id}/opt-outs/{channel}',
  summary: "Opt a client's phone number (sms) or email address (email) out",
  description:
    "Every client of the business with that address stops receiving that channel; idempotent (an address already opted out keeps its first record). Recorded with source `api` and, with a staff session, its staff member. A client without such an address is a 422 at `['path', 'channel']`.",
  params: clientOptOutPath,
  response: ClientDetailsResponse,
  errors: [403, 404],
  ...common,
});

export const optInClient = defineOperation({
  operationId: 'optInClient',
  method: 'delete',
  path: '/businesses/{business_id}/clients/{client_id}/opt-outs/{channel}',
  summary: "Opt a client's phone number or email address back in, recording how the client asked",
  description:
    'Only when the client asked for it. Appends an opt-in record (who, when, `source`, `note`); the opt-out record stays in the history. ' +
    "An opt-out the client made (a STOP-like reply, a provider's report, a possible opt-out staff confirmed, an import) is lifted only with `source` and `note` " +
    '(422 at `body.source` / `body.note` saying why otherwise; for SMS the client may also text START, UNSTOP or YES); an opt-out set by hand (PUT, the inbox) needs neither. ' +
    'A staff session acts as itself: a `staff_id` naming someone else is a 422. Idempotent: an address not opted out is left as is. A client without such an address is a 422.',
  params: clientOptOutPath,
  body: OptInRequest,
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
    "`confirm` opts out of SMS the number that sent the text and the client's current phone number if it is another one, `dismiss` keeps them subscribed; both clear `possible_opt_out_message_id` and add a note naming who decided. A staff session decides as itself: a `staff_id` naming someone else is a 422. 409 when nothing (or not `message_id`) is pending.",
  params: z.object({ business_id: idParam, conversation_id: idParam }),
  body: PossibleOptOutDecision,
  response: ClientDetailsResponse,
  errors: [403, 404, 409],
  // It adds a note (a message): a retried request replays its first answer instead of a 409.
  idempotent: true,
  auth: 'any',
});
