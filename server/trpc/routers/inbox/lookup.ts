import { z } from 'zod';
import { MAX_LIST_SEARCH_LENGTH, MIN_SEARCH_TERM_LENGTH, SEARCH_TERM_TOO_SHORT } from '@/server/schemas/common';
import { CLIENT_LOOKUP_MAX, lookupClients } from '@/server/services/directory';
import { staffProcedure } from '../../init';

/** The inbox's client lookup, shared by the top bar's search and New message (docs/api.md#client-search). */
export const lookupProcedures = {
  /** The session's business's clients a term finds: name, email, or a number however it is typed. */
  lookupClients: staffProcedure
    .input(
      z.object({
        term: z.string().trim().min(MIN_SEARCH_TERM_LENGTH, SEARCH_TERM_TOO_SHORT).max(MAX_LIST_SEARCH_LENGTH),
        limit: z.number().int().min(1).max(CLIENT_LOOKUP_MAX).default(8),
      }),
    )
    .query(({ ctx, input }) => lookupClients(ctx.caller.businessId, input.term, { limit: input.limit })),
};
