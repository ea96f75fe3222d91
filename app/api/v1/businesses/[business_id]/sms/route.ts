import { queueSms as op } from '@/server/http/operations/messages';
import { route } from '@/server/http/route';
import { submitSms } from '@/server/services/messages/submit';

// POST: queue SMS (single or bulk) for sending.
export const POST = route(op, ({ params, body }) => submitSms(params.business_id, body, 'send'));
