import { recordEmail as op } from '@/server/http/operations/messages';
import { route } from '@/server/http/route';
import { submitEmail } from '@/server/services/messages/submit';

// POST: record email (inbound or outbound) without sending.
export const POST = route(op, ({ params, body }) => submitEmail(params.business_id, body, 'record'));
