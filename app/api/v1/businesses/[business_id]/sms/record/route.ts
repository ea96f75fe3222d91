import { recordSms as op } from '@/server/http/operations/messages';
import { route } from '@/server/http/route';
import { submitSms } from '@/server/services/messages/submit';

// POST: record SMS (inbound or outbound) without sending.
export const POST = route(op, ({ params, body }) => submitSms(params.business_id, body, 'record'));
