import { getReminderRules as getOp, putReminderRules as putOp } from '@/server/http/operations/appointments';
import { route } from '@/server/http/route';
import { reminderRules, setBusinessReminderRules } from '@/server/services/appointments';

// GET, PUT: the business's appointment reminder rules (and each location's own, read-only here).
export const GET = route(getOp, ({ params, tx }) => reminderRules(params.business_id, tx));
export const PUT = route(putOp, ({ params, body, tx }) =>
  setBusinessReminderRules(params.business_id, body.rules, { cancelOnRequest: body.cancel_on_request }, tx),
);
