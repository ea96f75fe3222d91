import { sql } from 'drizzle-orm';
import type { AssignmentPolicy } from '@/db/schema';
import { equalsAny } from '@/db/sql-array';
import { db, type Tx } from '@/server/db/client';
import { enqueue } from '@/server/jobs/enqueue';
import { QUEUES } from '@/server/jobs/queues';
import { waitingForReply } from '@/server/services/conversations/waiting';
import { recordEvents, type NewEvent } from '@/server/services/events/record';
import { DEFAULT_CAPACITY, staffShifts, type StaffShift } from '@/server/services/staff-availability';

/*
 * Auto-assignment (docs/api.md#auto-assignment, docs/architecture.md#auto-assignment). A sweep of
 * a business gives its unassigned conversations waiting for a reply, oldest first, to available
 * staff of their location with room, by the location's policy (else the business's). Everything
 * that may give someone a conversation or room to take one calls it: the event log's handler
 * (./handler.ts: a client's message, a reply, a status change, a manual unassignment, someone back
 * from Away) and the `assignment.sweep` job (an opening or a shift start, a settings change, a
 * retry). The sweep reads the state, never the event that woke it, so running it twice, late or
 * concurrently is harmless.
 *
 * Under concurrency (two workers, a handler and a job, a manual assignment, the Away switch):
 * - One assigner per business at a time: the sweep holds the business's transaction-scoped
 *   advisory lock (it waits for it; nothing holding it waits for anything the others hold, so
 *   there is no deadlock). So a staff member's count cannot change by another sweep under it.
 * - Each conversation is taken `FOR NO KEY UPDATE SKIP LOCKED` with its conditions in the same
 *   statement (open, waiting, still unassigned), and the UPDATE says `assigned_staff_id is null`
 *   again: a conversation being assigned by hand, or receiving a message, right now is passed over
 *   (its own event brings a sweep), and a manual assignee is never replaced.
 * - Each staff member is locked `FOR NO KEY UPDATE SKIP LOCKED` (their Away switch takes the same
 *   row) and their availability re-read under the lock; every assignment re-counts their waiting
 *   conversations in the statement that assigns, after the lock, so nobody is given one past their
 *   capacity. A row or conversation passed over because it was locked schedules a retry a second
 *   later (a job).
 */

export const ASSIGNMENT_LOCK = 'assignment';
/** A sweep that passed over a locked conversation or staff member looks again this much later. */
const RETRY_SECONDS = 1;

export type Assignment = { conversationId: number; staffId: number; locationId: number | null };
export type SweepResult = {
  assigned: Assignment[];
  /** When a sweep job was scheduled for (the next shift start or opening), if one was. */
  wakeAt: Date | null;
  /** Something was locked by another transaction and passed over: a retry was scheduled. */
  retry: boolean;
};

type Settings = { assignment_policy?: AssignmentPolicy; assignment_capacity?: number; hand_back_on_away?: boolean };

/** The policy in force where a conversation belongs: its location's, else the business's, else off. */
export const policyOf = (location: AssignmentPolicy | null | undefined, business: Settings): AssignmentPolicy =>
  location ?? business.assignment_policy ?? 'off';

/** Staff who may take a location's conversations: its own and those of no location (a conversation of no location: anyone). */
const worksAt = (s: { locationId: number | null }, locationId: number | null) =>
  locationId === null || s.locationId === null || s.locationId === locationId;

/** Where a conversation belongs: its own location, else its client's (as the after-hours answer reads it). */
const CONVERSATION_LOCATION = sql`coalesce(c.location_id, cl.location_id)`;
const UNASSIGNED_WAITING = sql`c.assigned_staff_id is null and ${waitingForReply()}`;

/** Serialises the assigners of one business (see above); held until the transaction ends. */
export const lockBusinessAssignment = (businessId: number, tx: Tx) =>
  tx.execute(sql`select pg_advisory_xact_lock(${businessId}, hashtext(${ASSIGNMENT_LOCK}))`);

/** The business's settings and locations' policies. */
async function policies(businessId: number, tx: Tx) {
  const [business] = await tx.execute<{ settings: Settings }>(sql`select settings from businesses where id = ${businessId}`);
  const locations = await tx.execute<{ id: number; assignment_policy: AssignmentPolicy | null }>(
    sql`select id, assignment_policy from locations where business_id = ${businessId}`,
  );
  const settings = business?.settings ?? {};
  const byLocation = new Map(locations.map((l) => [l.id, l.assignment_policy]));
  return {
    settings,
    policyAt: (locationId: number | null) => policyOf(locationId === null ? null : byLocation.get(locationId), settings),
  };
}

/** The locations (null: none) having unassigned conversations waiting for a reply, oldest waiting first. */
async function backlog(businessId: number, tx: Tx): Promise<(number | null)[]> {
  const rows = await tx.execute<{ location_id: number | null }>(sql`
    select ${CONVERSATION_LOCATION} as location_id
    from conversations c left join clients cl on cl.business_id = c.business_id and cl.id = c.client_id
    where c.business_id = ${businessId} and ${UNASSIGNED_WAITING}
    group by 1 order by min(c.waiting_since)`);
  return rows.map((r) => r.location_id);
}

/** `lastAssignedAt`: microseconds since the epoch (a plan's turns are a microsecond apart: milliseconds would tie them). */
type Candidate = { staffId: number; capacity: number; waiting: number; lastAssignedAt: number };

/** Whose turn it is among those with room: round robin by who was given one longest ago; balanced by fewest waiting first. */
function pick(policy: AssignmentPolicy, staffWithRoom: Candidate[]): Candidate | undefined {
  const byTurn = (a: Candidate, b: Candidate) => a.lastAssignedAt - b.lastAssignedAt || a.staffId - b.staffId;
  const sorted = [...staffWithRoom].sort(policy === 'balanced' ? (a, b) => a.waiting - b.waiting || byTurn(a, b) : byTurn);
  return sorted[0];
}

/**
 * Locks the available staff among `ids` (skipping those locked elsewhere: `skipped`), re-reading
 * under the lock that they are active and not away, with their capacities, turns and waiting counts.
 */
async function lockCandidates(businessId: number, ids: number[], defaultCapacity: number, tx: Tx) {
  if (ids.length === 0) return { candidates: [] as Candidate[], skipped: false };
  const locked = await tx.execute<{
    id: number;
    away: boolean;
    active: boolean;
    capacity: number | null;
    last: string | null;
  }>(sql`
    select id, away, active, capacity, (extract(epoch from last_assigned_at) * 1000000)::bigint::text as last from staff
    where business_id = ${businessId} and ${equalsAny(sql`id`, ids, 'int')}
    order by id for no key update skip locked`);
  const usable = locked.filter((s) => s.active && !s.away);
  const counts = new Map<number, number>();
  if (usable.length) {
    const rows = await tx.execute<{ id: number; n: number }>(sql`
      select c.assigned_staff_id as id, count(*)::int as n from conversations c
      where c.business_id = ${businessId} and ${equalsAny(
        sql`c.assigned_staff_id`,
        usable.map((s) => s.id),
        'int',
      )}
        and ${waitingForReply()}
      group by 1`);
    for (const r of rows) counts.set(r.id, r.n);
  }
  return {
    skipped: locked.length < ids.length,
    candidates: usable.map((s) => ({
      staffId: s.id,
      capacity: s.capacity ?? defaultCapacity,
      waiting: counts.get(s.id) ?? 0,
      lastAssignedAt: s.last === null ? -Infinity : Number(s.last),
    })),
  };
}

type Planned = { conversationId: number; staffId: number; capacity: number; nth: number; order: number };

/**
 * Who gets which of `waiting` (oldest first), by the policy, as long as someone has room: each
 * staff member's `nth` planned conversation, and the plan's order (their turn moves to their last).
 */
function plan(policy: AssignmentPolicy, waiting: number[], candidates: Candidate[]): Planned[] {
  const planned: Planned[] = [];
  const nth = new Map<number, number>();
  for (const conversationId of waiting) {
    const s = pick(
      policy,
      candidates.filter((c) => c.waiting < c.capacity),
    );
    if (!s) break; // everyone here is full
    nth.set(s.staffId, (nth.get(s.staffId) ?? 0) + 1);
    planned.push({ conversationId, staffId: s.staffId, capacity: s.capacity, nth: nth.get(s.staffId)!, order: planned.length });
    s.waiting++;
    // After every turn read from the database (µs since the epoch, about 1.8e15 now), in the plan's order.
    s.lastAssignedAt = 8e15 + planned.length;
  }
  return planned;
}

/**
 * Applies a plan in one statement. A row is applied when its conversation is still unassigned and
 * waiting, and its staff member's waiting conversations, counted in this statement, plus their
 * planned ones up to it stay within their capacity: the count cannot change by another assigner
 * (their row is locked by us, and every other assigner of the business waits for our advisory
 * lock), and a row not applied only makes the others' margin wider, so nobody ends past capacity.
 * Each one given has their turn moved to when they got their last (statement_timestamp(): later
 * than any earlier sweep's, which committed before this statement began), in the plan's order.
 */
async function applyPlan(businessId: number, planned: Planned[], tx: Tx) {
  const col = <K extends keyof Planned>(k: K) => sql.param(planned.map((p) => p[k]));
  return tx.execute<{ id: number; staff_id: number }>(sql`
    with plan as (
      select * from unnest(${col('conversationId')}::int[], ${col('staffId')}::int[], ${col('capacity')}::int[],
                           ${col('nth')}::int[], ${col('order')}::int[]) as p(conversation_id, staff_id, capacity, nth, ord)
    ), held as (
      select c.assigned_staff_id as staff_id, count(*)::int as n from conversations c
      where c.business_id = ${businessId} and c.assigned_staff_id in (select staff_id from plan) and ${waitingForReply()}
      group by 1
    ), given as (
      update conversations c set assigned_staff_id = p.staff_id, last_activity_at = now()
      from plan p left join held h on h.staff_id = p.staff_id
      where c.business_id = ${businessId} and c.id = p.conversation_id and ${UNASSIGNED_WAITING}
        and coalesce(h.n, 0) + p.nth <= p.capacity
      returning c.id, p.staff_id, p.ord
    ), turn as (
      -- Runs whether or not the select below reads it (a data-modifying WITH always does).
      update staff s set last_assigned_at = statement_timestamp() + g.ord * interval '1 microsecond'
      from (select staff_id, max(ord) as ord from given group by 1) g
      where s.business_id = ${businessId} and s.id = g.staff_id
      returning s.id
    )
    select id, staff_id from given order by ord`);
}

/** Schedules a sweep of the business at `at` (one job per business and moment, however many ask). */
export async function scheduleSweep(businessId: number, at: Date | 'retry' | 'now', tx: Tx = db) {
  const when = at === 'retry' ? new Date(Date.now() + RETRY_SECONDS * 1000) : at === 'now' ? new Date() : at;
  const key = at instanceof Date ? at.toISOString() : at;
  await enqueue(tx, QUEUES.assignmentSweep, [{ data: { businessId }, startAt: when, singletonKey: `${businessId}@${key}` }]);
}

/**
 * Assigns what can be assigned in the business now (see the top of this file), and schedules the
 * next sweep when conversations are left waiting for staff who are off shift: at the earliest
 * moment one of them comes on (an opening, a shift start). `now`: tests move the clock.
 */
export async function sweepBusiness(businessId: number, now = new Date(), tx: Tx = db): Promise<SweepResult> {
  const result: SweepResult = { assigned: [], wakeAt: null, retry: false };
  // Nothing waits unassigned (a campaign's texts, a reply with no backlog): no lock, no work.
  if ((await backlog(businessId, tx)).length === 0) return result;
  return tx.transaction(async (tx) => {
    await lockBusinessAssignment(businessId, tx);
    const { settings, policyAt } = await policies(businessId, tx);
    const locations = (await backlog(businessId, tx)).filter((l) => policyAt(l) !== 'off');
    if (locations.length === 0) return result;
    const shifts = await staffShifts(businessId, tx);
    const defaultCapacity = settings.assignment_capacity ?? DEFAULT_CAPACITY;
    const events: NewEvent[] = [];
    const offShift = new Set<StaffShift>();
    for (const locationId of locations) {
      const here = shifts.filter((s) => worksAt(s, locationId) && !s.away);
      const onShift = here.filter((s) => s.shift.isOpen(now));
      for (const s of here) if (!onShift.includes(s)) offShift.add(s);
      const { candidates, skipped } = await lockCandidates(
        businessId,
        onShift.map((s) => s.staffId),
        defaultCapacity,
        tx,
      );
      if (skipped) result.retry = true;
      const room = candidates.reduce((n, c) => n + Math.max(0, c.capacity - c.waiting), 0);
      if (room === 0) continue;
      const waiting = await tx.execute<{ id: number }>(sql`
        select c.id from conversations c left join clients cl on cl.business_id = c.business_id and cl.id = c.client_id
        where c.business_id = ${businessId} and ${UNASSIGNED_WAITING}
          and ${CONVERSATION_LOCATION} is not distinct from ${locationId}
        order by c.waiting_since, c.id
        limit ${room}
        for no key update of c skip locked`);
      const planned = plan(
        policyAt(locationId),
        waiting.map((w) => w.id),
        candidates,
      );
      const given = planned.length ? await applyPlan(businessId, planned, tx) : [];
      // Planned but not given: a client wrote again to one of someone's, or the conversation changed: look again.
      if (given.length < planned.length) result.retry = true;
      for (const g of given) {
        result.assigned.push({ conversationId: g.id, staffId: g.staff_id, locationId });
        events.push({
          type: 'conversation.assigned',
          businessId,
          conversationId: g.id,
          actor: { type: 'system' },
          data: { conversation_id: g.id, staff_id: g.staff_id, previous_staff_id: null, by: 'auto' },
        });
      }
      // Fewer conversations than room came back: some were locked elsewhere (those that changed have their own events).
      if (waiting.length < room && (await stillWaiting(businessId, locationId, tx))) result.retry = true;
    }
    await recordEvents(events, tx);
    if (result.retry) await scheduleSweep(businessId, 'retry', tx);
    if (await hasBacklog(businessId, locations, tx)) {
      const openings = [...offShift].map((s) => s.shift.nextOpening(now)).filter((d): d is Date => d !== null);
      if (openings.length) {
        result.wakeAt = new Date(Math.min(...openings.map((d) => d.getTime())));
        await scheduleSweep(businessId, result.wakeAt, tx);
      }
    }
    return result;
  });
}

/** Whether the location still has an unassigned conversation waiting (read without locking: those others hold count too). */
async function stillWaiting(businessId: number, locationId: number | null, tx: Tx) {
  const [row] = await tx.execute(sql`
    select 1 from conversations c left join clients cl on cl.business_id = c.business_id and cl.id = c.client_id
    where c.business_id = ${businessId} and ${UNASSIGNED_WAITING}
      and ${CONVERSATION_LOCATION} is not distinct from ${locationId}
    limit 1`);
  return row !== undefined;
}

async function hasBacklog(businessId: number, locations: (number | null)[], tx: Tx) {
  const left = new Set(await backlog(businessId, tx));
  return locations.some((l) => left.has(l));
}

/**
 * Hand-back (the business's `hand_back_on_away`): the conversations of `staffId` waiting for a reply
 * go back to assignment, when they are away now. `conversationIds`: only these (a conversation that
 * reopened), else all of theirs (they went Away). Each is a `conversation.assigned` to nobody, by auto.
 */
export async function handBack(
  businessId: number,
  staffId: number | null,
  conversationIds: number[] | null,
  tx: Tx = db,
): Promise<number[]> {
  const rows = await tx.execute<{ id: number; previous: number }>(sql`
    update conversations c set assigned_staff_id = null, last_activity_at = now()
    from staff s, businesses b
    where c.business_id = ${businessId} and b.id = c.business_id and coalesce((b.settings->>'hand_back_on_away')::boolean, false)
      and s.business_id = c.business_id and s.id = c.assigned_staff_id and s.away
      and ${staffId === null ? sql`true` : sql`c.assigned_staff_id = ${staffId}`}
      and ${conversationIds === null ? sql`true` : equalsAny(sql`c.id`, conversationIds, 'int')}
      and ${waitingForReply()}
    returning c.id, s.id as previous`);
  await recordEvents(
    rows.map((r) => ({
      type: 'conversation.assigned' as const,
      businessId,
      conversationId: r.id,
      actor: { type: 'system' as const },
      data: { conversation_id: r.id, staff_id: null, previous_staff_id: r.previous, by: 'auto' as const },
    })),
    tx,
  );
  return rows.map((r) => r.id);
}
