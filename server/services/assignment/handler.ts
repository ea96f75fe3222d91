import { sql } from 'drizzle-orm';
import { equalsAny } from '@/db/sql-array';
import type { Tx } from '@/server/db/client';
import { isReplyEvent } from '@/server/services/conversations/waiting';
import type { EventHandler, LoggedEvent } from '@/server/services/events/dispatch';
import { handBack, lockBusinessAssignment, sweepBusiness } from './index';

/**
 * Auto-assignment as a handler of the event log (docs/architecture.md#auto-assignment). It reads
 * what may change who should hold a conversation and sweeps each business concerned once per batch
 * (./index.ts): nothing on the inbound or sending paths knows about assignment.
 *
 * - a client's text or email (`message.received`): a new conversation, or one unassigned, waits;
 * - a reply (`message.created` that ends waiting) and a status change: its assignee has room, or a
 *   conversation reopened (kept by its assignee unless they are away and hand-back is on);
 * - a manual unassignment or reassignment (`conversation.assigned` by manual): a conversation to
 *   give, or room; the handler's own (`by: auto`) wake nothing;
 * - `staff.availability_changed`: back, they take waiting conversations; away, theirs are handed
 *   back when the business says so.
 *
 * Our own outbound that is not a reply (the system's texts, anything scheduled) is dropped on
 * reading; a campaign's texts are replies to any waiting client they reach, and a sweep without
 * unassigned conversations waiting ends at its first query, so a campaign costs one query per
 * business per batch. Businesses with neither a policy on nor hand-back are filtered out first, in
 * one query a batch.
 */

export const ASSIGNMENT_HANDLER = 'auto-assignment';

const isTrigger = (e: LoggedEvent): boolean => {
  const d = e.data;
  switch (e.type) {
    case 'message.received':
      return d.channel === 'sms' || d.channel === 'email';
    case 'message.created':
      return isReplyEvent(e);
    case 'conversation.assigned':
      return d.by !== 'auto';
    case 'conversation.status_changed':
    case 'staff.availability_changed':
      return true;
    default:
      return false;
  }
};

/** Of these businesses, those where assignment does anything: a policy on (the business's or a location's) or hand-back. */
async function assigning(businessIds: number[], tx: Tx): Promise<number[]> {
  if (businessIds.length === 0) return [];
  const rows = await tx.execute<{ id: number }>(sql`
    select b.id from businesses b
    where ${equalsAny(sql`b.id`, businessIds, 'int')}
      and (coalesce(b.settings->>'assignment_policy', 'off') <> 'off'
           or coalesce((b.settings->>'hand_back_on_away')::boolean, false)
           or exists (select 1 from locations l where l.business_id = b.id and l.assignment_policy <> 'off'))
    order by b.id`);
  return rows.map((r) => r.id);
}

/** One business's share of a batch: hand-backs first (so the sweep gives those conversations to others), then the sweep. */
async function handleBusiness(businessId: number, events: LoggedEvent[], now: Date, tx: Tx) {
  const away = events.filter((e) => e.type === 'staff.availability_changed' && e.data.away === true);
  const reopened = events
    .filter((e) => e.type === 'conversation.status_changed' && e.data.status === 'open' && e.data.previous_status !== 'open')
    .map((e) => e.conversationId!);
  if (away.length || reopened.length) {
    await lockBusinessAssignment(businessId, tx);
    for (const e of away) await handBack(businessId, e.data.staff_id as number, null, tx);
    if (reopened.length) await handBack(businessId, null, reopened, tx);
  }
  await sweepBusiness(businessId, now, tx);
}

export const assignmentHandler: EventHandler = {
  name: ASSIGNMENT_HANDLER,
  types: [
    'message.received',
    'message.created',
    'conversation.assigned',
    'conversation.status_changed',
    'staff.availability_changed',
  ],
  handle: async (events, tx) => {
    const triggers = events.filter(isTrigger);
    const byBusiness = new Map<number, LoggedEvent[]>();
    for (const e of triggers) byBusiness.set(e.businessId, [...(byBusiness.get(e.businessId) ?? []), e]);
    const now = new Date();
    // In business id order: a batch takes the businesses' advisory locks in one order, as every
    // other assigner takes one at most, so they never deadlock.
    for (const businessId of await assigning([...byBusiness.keys()], tx)) {
      await handleBusiness(businessId, byBusiness.get(businessId)!, now, tx);
    }
  },
};
