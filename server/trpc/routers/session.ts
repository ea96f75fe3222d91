import { expireSession, getStaffProfile } from '@/server/services/auth';
import { router, staffProcedure } from '../init';

export const sessionRouter = router({
  /** The signed-in staff member and their business. */
  me: staffProcedure.query(({ ctx }) => getStaffProfile(ctx.caller.businessId, ctx.caller.staffId)),
  signOut: staffProcedure.mutation(async ({ ctx }) => ({ expired: await expireSession(ctx.caller, undefined) })),
});
