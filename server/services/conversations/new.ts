import { and, eq } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { clients } from '@/db/schema';
import { AppError, type ErrorLocation } from '@/server/errors';
import { normalizePhone } from '@/server/lib/phone';
import { ensureConversations } from './activity';
import { conversationDetails } from './index';
import { businessCountry, findOrCreateClientByEmail, findOrCreateClientByPhone } from '@/server/services/directory';

/**
 * Starting a conversation (docs/api.md#conversations, New conversation): with a client of the
 * directory, or with a phone number or email address typed by hand. A number is read in the
 * business's country; one or an address that no client has becomes a new `lead` (as an inbound
 * text from it would). Lands in the client's one conversation, created if it has none.
 */

/** Exactly one of the three (the request schemas check it). */
export type ConversationTarget = { client_id?: number; phone_number?: string; email?: string };

export async function startConversation(
  businessId: number,
  target: ConversationTarget,
  loc: ErrorLocation[0] = 'body',
  tx: Tx = db,
) {
  const conversationId = await tx.transaction(async (tx) => {
    const clientId = await clientFor(businessId, target, loc, tx);
    return (await ensureConversations(businessId, [clientId], tx)).get(clientId)!;
  });
  return conversationDetails(businessId, conversationId, tx);
}

async function clientFor(businessId: number, target: ConversationTarget, loc: ErrorLocation[0], tx: Tx): Promise<number> {
  if (target.client_id !== undefined) {
    const [client] = await tx
      .select({ id: clients.id })
      .from(clients)
      .where(and(eq(clients.businessId, businessId), eq(clients.id, target.client_id)))
      .limit(1);
    if (!client) throw AppError.invalid([loc, 'client_id'], `Client ${target.client_id} not found in this business`);
    return client.id;
  }
  if (target.phone_number !== undefined) {
    const country = await businessCountry(businessId, tx);
    const phone = normalizePhone(target.phone_number, country);
    if (!phone) throw AppError.invalid([loc, 'phone_number'], `is not a phone number (read with country ${country})`);
    return findOrCreateClientByPhone(businessId, phone, tx);
  }
  if (target.email !== undefined) return findOrCreateClientByEmail(businessId, target.email, undefined, tx);
  throw AppError.invalid([loc], 'Give one of client_id, phone_number or email');
}
