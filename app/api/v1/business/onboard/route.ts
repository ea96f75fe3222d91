import { onboardBusiness as op } from '@/server/http/operations/onboarding';
import { route } from '@/server/http/route';
import { onboardBusiness } from '@/server/services/onboarding';

// POST: create or update a business with its senders, locations, staff and clients (platform key).
export const POST = route(op, ({ body, tx }) => onboardBusiness(body, tx));
