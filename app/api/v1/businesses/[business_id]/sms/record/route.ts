import { recordSms as op } from '@/server/http/operations/messages';
import { route } from '@/server/http/route';
import { ownStaffOnly } from '@/server/http/staff-context';
import { submitSms } from '@/server/services/messages/submit';

// POST: record SMS (inbound or outbound) without sending.
export const POST = route(op, ({ caller, params, body }) => {
  ownStaffOnly(caller, body.staff_id);
  return submitSms(params.business_id, body, 'record');
});
