import { getOnboardingStatus as op } from '@/server/http/operations/onboarding';
import { route } from '@/server/http/route';
import { getOnboardingStatus } from '@/server/services/onboarding';

// GET: the latest onboarding's status and steps (clients import progress included).
export const GET = route(op, ({ params, tx }) => getOnboardingStatus(params.business_id, tx));
