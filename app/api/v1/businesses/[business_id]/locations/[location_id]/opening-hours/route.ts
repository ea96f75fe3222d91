import {
  clearLocationOpeningHours as clearOp,
  getLocationOpeningHours,
  setLocationOpeningHours,
} from '@/server/http/operations/opening-hours';
import { route } from '@/server/http/route';
import { clearLocationOpeningHours, getOpeningHours, setOpeningHours } from '@/server/services/opening-hours';

// GET: the hours that apply at the location; PUT: its own; DELETE: back to the business's.
export const GET = route(getLocationOpeningHours, ({ params, query, tx }) =>
  getOpeningHours(params.business_id, params.location_id, query.at, tx),
);
export const PUT = route(setLocationOpeningHours, ({ params, body, tx }) =>
  setOpeningHours(params.business_id, params.location_id, body, tx),
);
export const DELETE = route(clearOp, ({ params, tx }) => clearLocationOpeningHours(params.business_id, params.location_id, tx));
