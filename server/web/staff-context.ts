import { AppError, type ErrorLocation } from '@/server/errors';
import { TtlCache } from '@/server/lib/ttl-cache';
import type { Caller } from '@/server/services/auth';
import { requireStaff, staffRole } from '@/server/services/directory';
import type { StaffRole } from '@/db/schema';
import { db, type Tx } from '@/server/db/client';
import type { EventActor } from '@/server/services/events/types';

/** The staff member acting: the session's, else none (an API key acts as the platform/business). */
export const actingStaff = (caller: Caller): number | null => (caller.kind === 'session' ? caller.staffId : null);

/**
 * The one rule for a write's body `staff_id` (docs/api.md#staff-sessions): a staff session acts as
 * its own staff member, so naming anyone else is a 422 on the field (a note signed, a conversation
 * resolved, a message attributed or an opt-out decided in a colleague's name); naming itself is
 * allowed. An API key may name a staff member of the business (the service checks who). Not for
 * fields that name someone acted upon rather than who acts (an assignee).
 */
export function ownStaffOnly(caller: Caller, named: number | undefined, loc: ErrorLocation = ['body', 'staff_id']): void {
  if (caller.kind === 'session' && named !== undefined && named !== caller.staffId) {
    throw AppError.invalid(
      loc,
      `A staff session acts as its own staff member (${caller.staffId}): leave staff_id out, or name yourself`,
    );
  }
}

/** Who a write acts as: the session's own staff member, else the staff member an API key names, else none. */
export function writingStaff(
  caller: Caller,
  named: number | undefined,
  loc: ErrorLocation = ['body', 'staff_id'],
): number | null {
  ownStaffOnly(caller, named, loc);
  return caller.kind === 'session' ? caller.staffId : (named ?? null);
}

/**
 * A send or record envelope as its caller writes it: a session's messages are its own staff
 * member's, whether it names itself or leaves staff_id out (docs/api.md#staff-sessions).
 */
export function asWritingStaff<T extends { staff_id?: number }>(caller: Caller, body: T): T {
  const staffId = writingStaff(caller, body.staff_id);
  return staffId === null || staffId === body.staff_id ? body : { ...body, staff_id: staffId };
}

/**
 * Active staff members of a business that a `staff_id` query named, remembered like API keys
 * (TtlCache): the list and its filter counts run on every inbox refresh, and the check was a round
 * trip of its own. Only for this read-only scope (whose `mine` an API key lists, a key that can
 * read the whole business anyway): a member deactivated is refused here at most TTL_CACHE_MS later;
 * writes naming a staff member check the database every time.
 */
const mineStaff = new TtlCache<true>();

/** Whose `mine`: the session's staff, or a `staff_id` query (checked against the business) with an API key. */
export async function staffForMine(caller: Caller, businessId: number, queryStaffId: number | undefined): Promise<number | null> {
  if (queryStaffId === undefined) return actingStaff(caller);
  const key = `${businessId}:${queryStaffId}`;
  if (mineStaff.get(key)) return queryStaffId;
  const id = await requireStaff(businessId, queryStaffId, ['query', 'staff_id']);
  mineStaff.set(key, true);
  return id;
}

/** The event log's actor of a request's change: its staff session's member, else the API (a key, the platform). */
export const actorOfCaller = (caller: Caller): EventActor =>
  caller.kind === 'session' ? { type: 'staff', staff_id: caller.staffId } : { type: 'api' };

/**
 * The roles (docs/api.md#staff-sessions, Roles): what only an `owner` or a `manager` may do (the business's
 * integrations: outgoing webhooks). An API key acts for the business and may; a staff session of
 * another role is a 403.
 */
export async function requireRole(caller: Caller, roles: readonly StaffRole[], tx: Tx = db): Promise<void> {
  if (caller.kind !== 'session') return;
  const role = await staffRole(caller.businessId, caller.staffId, tx);
  if (!role || !roles.includes(role)) {
    throw new AppError('forbidden', `This needs the ${roles.join(' or ')} role; ask an owner of the business`);
  }
}

/**
 * A change to one staff member (their schedule, their Away switch): their own session may make it;
 * a colleague's session needs one of `roles`; an API key acts for the business and may.
 */
export async function requireSelfOrRole(caller: Caller, staffId: number, roles: readonly StaffRole[], tx: Tx = db) {
  if (caller.kind === 'session' && caller.staffId === staffId) return;
  await requireRole(caller, roles, tx);
}
