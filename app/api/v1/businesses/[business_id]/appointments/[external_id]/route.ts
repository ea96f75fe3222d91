import {
  deleteAppointment as deleteOp,
  getAppointment as getOp,
  putAppointment as putOp,
} from '@/server/http/operations/appointments';
import { json, route } from '@/server/http/route';
import { cancelByExternalId, getAppointment, upsertAppointment } from '@/server/services/appointments';
import { actorOfCaller } from '@/server/web/staff-context';

// GET, PUT (upsert: 201 created, 200 updated), DELETE (= canceled): one appointment by the platform's id.
export const GET = route(getOp, ({ params, tx }) => getAppointment(params.business_id, params.external_id, tx));
export const PUT = route(putOp, async ({ params, body, caller, tx }) => {
  const result = await upsertAppointment(params.business_id, params.external_id, body, actorOfCaller(caller), new Date(), tx);
  return json(result.created ? 201 : 200, result.appointment);
});
export const DELETE = route(deleteOp, ({ params, caller, tx }) =>
  cancelByExternalId(params.business_id, params.external_id, actorOfCaller(caller), tx),
);
