import { queueSms as op } from '@/server/http/operations/messages';
import { route } from '@/server/http/route';
import { asWritingStaff } from '@/server/web/staff-context';
import { submitSms } from '@/server/services/messages/submit';

// POST: queue SMS (single or bulk) for sending.
export const POST = route(op, ({ caller, params, body, tx }) => {
  return submitSms(params.business_id, asWritingStaff(caller, body), 'send', {}, tx);
});
