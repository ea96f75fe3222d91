import { and, eq, sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { clients } from '@/db/schema';
import { AppError } from '@/server/errors';
import { clientDetails } from '@/server/services/conversations';
import { recordEvents, staffOrApi } from '@/server/services/events/record';

/** What staff or the API may change of a client (server/schemas/clients.ts): undefined keeps, null clears. */
export type ClientChange = { name?: string | null; email?: string | null };

/**
 * PATCH /clients/{client_id} and the inbox's client panel (docs/api.md#clients-staff-and-locations):
 * a client's name and email address, of this business only (404 otherwise). The fields that really
 * changed are written with a `client.updated` event naming them, in the same transaction; a request
 * that changes nothing writes nothing. Opt-outs and consent need nothing here: they belong to the
 * address and are derived from the client's current one when read. Answers the client's details.
 */
export async function updateClient(
  businessId: number,
  clientId: number,
  change: ClientChange,
  actingStaffId: number | null,
  tx: Tx = db,
) {
  return tx.transaction(async (tx) => {
    const where = and(eq(clients.businessId, businessId), eq(clients.id, clientId));
    const [before] = await tx
      .select({ name: clients.name, email: clients.email })
      .from(clients)
      .where(where)
      // The UPDATE's own lock strength, taken first so two edits of one client see each other's result.
      .for('no key update');
    if (!before) throw AppError.notFound('Client');
    const set: ClientChange = {};
    if (change.name !== undefined && change.name !== before.name) set.name = change.name;
    if (change.email !== undefined && change.email !== before.email) set.email = change.email;
    const fields = Object.keys(set);
    if (fields.length > 0) {
      await tx
        .update(clients)
        .set({ ...set, updatedAt: sql`now()` })
        .where(where);
      await recordEvents(
        [
          {
            type: 'client.updated',
            businessId,
            clientId,
            actor: staffOrApi(actingStaffId),
            data: { client_id: clientId, fields },
          },
        ],
        tx,
      );
    }
    return (await clientDetails(businessId, clientId, tx))!;
  });
}
