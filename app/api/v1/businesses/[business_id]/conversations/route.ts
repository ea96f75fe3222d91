import { createConversation, listConversations } from '@/server/http/operations/conversations';
import { jsonText, route } from '@/server/http/route';
import { staffForMine } from '@/server/web/staff-context';
import * as conversations from '@/server/services/conversations';
import { startConversation } from '@/server/services/conversations/new';

// GET: the conversation list with filters, as JSON text built by the database. POST: start (or
// retrieve) a conversation with a client, a number or an address.
export const GET = route(listConversations, async ({ caller, params, query, tx }) => {
  const staffId = await staffForMine(caller, params.business_id, query.staff_id);
  return jsonText(await conversations.listConversationsJson(params.business_id, query, staffId, tx));
});
export const POST = route(createConversation, ({ params, body, tx }) =>
  startConversation(params.business_id, body, undefined, tx),
);
