import { getBusinessOpeningHours, setBusinessOpeningHours } from '@/server/http/operations/opening-hours';
import { route } from '@/server/http/route';
import { getOpeningHours, setOpeningHours } from '@/server/services/opening-hours';

// GET: the business's opening hours and the clock's reading; PUT: replace them.
export const GET = route(getBusinessOpeningHours, ({ params, query, tx }) =>
  getOpeningHours(params.business_id, null, query.at, tx),
);
export const PUT = route(setBusinessOpeningHours, ({ params, body, tx }) => setOpeningHours(params.business_id, null, body, tx));
