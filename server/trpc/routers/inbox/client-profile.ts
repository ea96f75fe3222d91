import { UpdateClientInput } from '@/server/schemas/clients';
import { updateClient } from '@/server/services/clients';
import { staffProcedure } from '../../init';

/** The client panel's profile form: a lead gets a name, a client a new address (docs/api.md#clients-staff-and-locations). */
export const clientProfileProcedures = {
  /** The same rules as REST's PATCH; the change is the session's staff member's. Another business's client is a 404. */
  updateClient: staffProcedure
    .input(UpdateClientInput)
    .mutation(({ ctx, input: { clientId, ...change } }) =>
      updateClient(ctx.caller.businessId, clientId, change, ctx.caller.staffId),
    ),
};
