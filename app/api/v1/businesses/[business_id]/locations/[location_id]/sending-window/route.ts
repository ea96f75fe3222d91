import { clearLocationSendingWindow, setLocationSendingWindow as setOp } from '@/server/http/operations/businesses';
import { route } from '@/server/http/route';
import { setLocationSendingWindow } from '@/server/services/sending-windows';

// PUT: a location's own sending window; DELETE: back to the business's.
export const PUT = route(setOp, ({ params, body, tx }) =>
  setLocationSendingWindow(params.business_id, params.location_id, body, tx),
);
export const DELETE = route(clearLocationSendingWindow, ({ params, tx }) =>
  setLocationSendingWindow(params.business_id, params.location_id, null, tx),
);
