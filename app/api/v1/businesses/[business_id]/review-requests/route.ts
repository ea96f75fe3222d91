import { getReviewRequestSettings as getOp, putReviewRequestSettings as putOp } from '@/server/http/operations/appointments';
import { route } from '@/server/http/route';
import { reviewRequestSettings, setReviewRequestSettings } from '@/server/services/appointments';

// GET, PUT: the business's review requests after a completed appointment (docs/api.md#review-requests).
export const GET = route(getOp, ({ params, tx }) => reviewRequestSettings(params.business_id, tx));
export const PUT = route(putOp, ({ params, body, tx }) => setReviewRequestSettings(params.business_id, body, tx));
