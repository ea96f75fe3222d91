import {
  deleteLocationReminderRules as deleteOp,
  putLocationReminderRules as putOp,
} from '@/server/http/operations/appointments';
import { route } from '@/server/http/route';
import { setLocationReminderRules } from '@/server/services/appointments';

// PUT, DELETE: a location's own reminder rules (DELETE: the business's again). Another business's location is a 404.
export const PUT = route(putOp, ({ params, body, tx }) =>
  setLocationReminderRules(params.business_id, params.location_id, body.rules, tx),
);
export const DELETE = route(deleteOp, ({ params, tx }) =>
  setLocationReminderRules(params.business_id, params.location_id, null, tx),
);
