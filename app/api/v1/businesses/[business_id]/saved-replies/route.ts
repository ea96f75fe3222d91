import { createSavedReply as createOp, listSavedReplies as listOp } from '@/server/http/operations/saved-replies';
import { route } from '@/server/http/route';
import { createSavedReply, listSavedReplies } from '@/server/services/saved-replies';

// GET: the business's saved replies; POST: a new one.
export const GET = route(listOp, ({ params, query }) => listSavedReplies(params.business_id, query));
export const POST = route(createOp, ({ params, body }) => createSavedReply(params.business_id, body));
