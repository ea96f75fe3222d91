import {
  deleteSavedReply as deleteOp,
  getSavedReply as getOp,
  updateSavedReply as updateOp,
} from '@/server/http/operations/saved-replies';
import { route } from '@/server/http/route';
import { deleteSavedReply, getSavedReply, updateSavedReply } from '@/server/services/saved-replies';

// GET, PATCH, DELETE: one saved reply of the business (404 for another business's).
export const GET = route(getOp, ({ params, tx }) => getSavedReply(params.business_id, params.saved_reply_id, tx));
export const PATCH = route(updateOp, ({ params, body, tx }) =>
  updateSavedReply(params.business_id, params.saved_reply_id, body, tx),
);
export const DELETE = route(deleteOp, ({ params, tx }) => deleteSavedReply(params.business_id, params.saved_reply_id, tx));
