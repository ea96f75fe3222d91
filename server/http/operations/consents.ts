import { z } from 'zod';
import { idParam } from '@/server/schemas/common';
import { ClientConsents, ConsentRecord, ConsentRequest } from '@/server/schemas/consent';
import { defineOperation } from '../operation';

const clientPath = z.object({ business_id: idParam, client_id: idParam });

export const listClientConsents = defineOperation({
  operationId: 'getClientConsents',
  method: 'get',
  path: '/businesses/{business_id}/clients/{client_id}/consents',
  tag: 'business-clients',
  summary: "Get a client's consent: the current record per channel and purpose, and the history",
  description:
    'Campaign messages, and messages whose notification type is `marketing` or `review_request`, are sent only when the current `marketing` record for their channel is `given` (docs: Consent).',
  params: clientPath,
  response: ClientConsents,
  auth: 'any',
  errors: [403, 404],
});

export const recordClientConsent = defineOperation({
  operationId: 'recordClientConsent',
  method: 'post',
  path: '/businesses/{business_id}/clients/{client_id}/consents',
  tag: 'business-clients',
  summary: 'Record consent given or withdrawn by a client',
  description:
    'Appends a record (records are never changed): the latest by `recorded_at` is the current one for its channel and purpose. ' +
    '`recorded_at` is never later than now: up to 5 s ahead (clock skew) is stored as now, later is a 422 on `recorded_at`. ' +
    'With a staff session the record names its staff member. A consent record never lifts an opt-out (docs: Opt-out).',
  params: clientPath,
  body: ConsentRequest,
  response: ConsentRecord,
  auth: 'any',
  errors: [403, 404],
});
