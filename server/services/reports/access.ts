import { db, type Tx } from '@/server/db/client';
import { AppError } from '@/server/errors';
import type { Caller } from '@/server/services/auth';
import { staffRole } from '@/server/services/directory';
import type { ReportQuery } from './read';

/** Does the caller see every staff member's figures (an owner, a manager, an API key), or only its own? */
export async function seesEveryFigure(caller: Caller, businessId: number, tx: Tx = db): Promise<boolean> {
  if (caller.kind !== 'session') return true;
  const role = await staffRole(businessId, caller.staffId, tx);
  return role === 'owner' || role === 'manager';
}

/**
 * Who sees which figures (docs/api.md#reports): an owner or a manager, and an API key, every one; any
 * other staff session only its own — `staff_id` is forced to it, and naming a colleague is a 403.
 */
export async function scopedQuery(caller: Caller, businessId: number, q: ReportQuery, tx: Tx = db): Promise<ReportQuery> {
  if (caller.kind !== 'session' || (await seesEveryFigure(caller, businessId, tx))) return q;
  if (q.staff_id !== undefined && q.staff_id !== caller.staffId) {
    throw new AppError('forbidden', 'Staff see only their own figures: the owner or manager role sees a colleague’s');
  }
  return { ...q, staff_id: caller.staffId };
}
