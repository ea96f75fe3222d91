import { createConversation, listConversations } from '@/server/http/operations/conversations';
import { route } from '@/server/http/route';
import { staffForMine } from '@/server/http/staff-context';
import * as conversations from '@/server/services/conversations';

// GET: the conversation list with filters. POST: create or retrieve a client's conversation.
export const GET = route(listConversations, async ({ caller, params, query }) =>
  conversations.listConversations(params.business_id, query, await staffForMine(caller, params.business_id, query.staff_id)),
);
export const POST = route(createConversation, ({ params, body }) =>
  conversations.createOrRetrieveConversation(params.business_id, body.client_id),
);
