import { createSavedReply as createOp, listSavedReplies as listOp } from '@/server/http/operations/saved-replies';
import { route } from '@/server/http/route';
import { createSavedReply, listSavedReplies } from '@/server/services/saved-replies';

// GET: the business's saved replies; POST: a new one.
export const GET = route(listOp, ({ params, query, tx }) => listSavedReplies(params.business_id, query, tx));
export const POST = route(createOp, ({ params, body, tx }) => createSavedReply(params.business_id, body, tx));
