import { z } from 'zod';
import { email, id } from './common';

/**
 * A client's own details as staff or the API change them (docs/api.md#clients-staff-and-locations):
 * today the name (a lead arrives as a bare number or address) and the email address. Each field
 * is optional; `null` clears it. The bounds are the API's limits for names and addresses.
 */
export const UpdateClientFields = z.object({
  name: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(200)
    .nullable()
    .optional()
    .meta({ description: "The client's name, 1 to 200 characters once trimmed; null clears it" }),
  email: email
    .nullable()
    .optional()
    .meta({ description: 'Stored in lower case; null clears it. Opt-outs follow the address (docs: Opt-out)' }),
});

/** Nothing to change is a mistake worth a 422, not a silent 200. */
const SOMETHING_TO_CHANGE = (body: { name?: unknown; email?: unknown }, ctx: z.RefinementCtx) => {
  if (body.name === undefined && body.email === undefined)
    ctx.addIssue({ code: 'custom', message: 'give at least one of name or email', params: { type: 'missing' } });
};

export const UpdateClientRequest = UpdateClientFields.superRefine(SOMETHING_TO_CHANGE).meta({ id: 'UpdateClientRequest' });

/** The inbox's form: the same fields and rule, with the client named (tRPC `inbox.updateClient`). */
export const UpdateClientInput = UpdateClientFields.extend({ clientId: id }).superRefine(SOMETHING_TO_CHANGE);
