import { queueEmail as op } from '@/server/http/operations/messages';
import { route } from '@/server/http/route';
import { submitEmail } from '@/server/services/messages/submit';

// POST: queue email (single or bulk) for sending.
export const POST = route(op, ({ params, body }) => submitEmail(params.business_id, body, 'send'));
