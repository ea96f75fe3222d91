import { queueEmail as op } from '@/server/http/operations/messages';
import { route } from '@/server/http/route';
import { ownStaffOnly } from '@/server/http/staff-context';
import { submitEmail } from '@/server/services/messages/submit';

// POST: queue email (single or bulk) for sending.
export const POST = route(op, ({ caller, params, body }) => {
  ownStaffOnly(caller, body.staff_id);
  return submitEmail(params.business_id, body, 'send');
});
