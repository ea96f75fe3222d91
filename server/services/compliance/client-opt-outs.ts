import { and, eq, sql } from 'drizzle-orm';
import { db } from '@/db/client';
import { clients, type OptOutChannel } from '@/db/schema';
import { AppError } from '@/server/errors';
import { publish } from '@/server/realtime/publish';
import { clientDetails } from '@/server/services/conversations';
import { optIn, optOut, suppressionAddress } from '@/server/services/messages/suppression';

/**
 * Setting a client's opt-out explicitly (docs/api.md#opt-out): staff in the inbox (`staff`) or an
 * API caller (`api`) opt the client's current phone number out of SMS, or their email out of email,
 * or back in. Like every opt-out it belongs to the address, so every client row of the business
 * with that address shows it and every one of their conversations is refreshed in the inbox.
 */
export async function setClientOptOut(
  businessId: number,
  clientId: number,
  channel: OptOutChannel,
  optedOut: boolean,
  source: 'staff' | 'api',
) {
  const [client] = await db
    .select({ phone: clients.phoneNumber, email: clients.email })
    .from(clients)
    .where(and(eq(clients.businessId, businessId), eq(clients.id, clientId)))
    .limit(1);
  if (!client) throw AppError.notFound('Client');
  const address = suppressionAddress(channel, (channel === 'sms' ? client.phone : client.email) ?? '');
  if (!address) {
    const what = channel === 'sms' ? 'mobile number' : 'email address';
    throw AppError.invalid(['path', 'channel'], `This client has no ${what} to opt ${optedOut ? 'out' : 'in'}`, 'missing');
  }
  await db.transaction(async (tx) => {
    if (optedOut) await optOut(tx, { businessId, channel, address, source });
    else await optIn(tx, { businessId, channel, address });
    // Staff (or the API) decided about texts, either way: a possible opt-out left pending by an
    // inbound text is settled too (docs/api.md#possible-opt-outs). The lookups use the clients'
    // (business_id, phone_number) and (business_id, lower(email)) indexes.
    const sameAddress = channel === 'sms' ? sql`cl.phone_number = ${address}` : sql`lower(cl.email) = ${address}`;
    const shown = await tx.execute<{ id: number }>(sql`
      with shown as (
        select c.id from clients cl join conversations c on c.business_id = cl.business_id and c.client_id = cl.id
        where cl.business_id = ${businessId} and ${sameAddress}
      ), settled as (
        update conversations c set possible_opt_out_message_id = null from shown
        where c.id = shown.id and c.business_id = ${businessId} and ${channel === 'sms'} and c.possible_opt_out_message_id is not null
      )
      select id from shown`);
    if (shown.length > 0)
      await publish(tx, { type: 'conversation.updated', businessId, conversationIds: shown.map((r) => r.id) });
  });
  return (await clientDetails(businessId, clientId))!;
}
