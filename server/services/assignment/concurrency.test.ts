import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { setConversationStatus } from '@/server/services/conversations';
import { dispatchEvents } from '@/server/services/events/dispatch';
import { setStaffAway } from '@/server/services/staff-availability';
import { WEEKDAYS, type WeeklyHours } from '@/server/shared/opening-hours';
import { assigningBusiness, newClientTexts, reply, settle, textIn } from '@/server/testing/assignment';
import { createClient, createStaff } from '@/server/testing/factories';
import { prng } from '@/server/testing/prng';
import { assignmentHandler } from './handler';
import { sweepBusiness } from './index';

/**
 * Auto-assignment under concurrency (docs/architecture.md#auto-assignment): a randomized workload
 * (clients writing, staff answering and resolving, staff going Away and coming back) runs while
 * two workers assign at once, each running the event log's handler and the sweep job's sweep.
 * Checked against recounts: during the run, nobody ever holds more conversations waiting for their
 * reply than their capacity (the workload's clients write again only where that cannot raise
 * anyone's count, so only an assignment could); at every assignment its assignee was available
 * (a trigger records what the assigning transaction saw, under the staff row's lock); at the end,
 * once the log is handled and due sweep jobs have run, no conversation waits unassigned while an
 * available colleague has room, and no conversation was assigned twice.
 */

const CAPACITY = 3;
const SEED = Number(process.env.ASSIGNMENT_SEED ?? 36);

beforeAll(async () => {
  // What each assignment saw in its own transaction: the assignee's Away switch and their waiting count.
  await db.execute(sql`
    create table assignment_audit (conversation_id int, staff_id int, away boolean, waiting int, at timestamptz default clock_timestamp());
    create function assignment_audit() returns trigger language plpgsql as $$
    begin
      insert into assignment_audit (conversation_id, staff_id, away, waiting)
      select new.id, new.assigned_staff_id, s.away,
             (select count(*) from conversations c where c.business_id = new.business_id and c.assigned_staff_id = new.assigned_staff_id
                and c.status = 'open' and c.waiting_since is not null)
      from staff s where s.id = new.assigned_staff_id;
      return new;
    end $$;
    create trigger assignment_audit after update of assigned_staff_id on conversations
      for each row when (new.assigned_staff_id is not null and old.assigned_staff_id is null) execute function assignment_audit();`);
});
afterAll(async () => {
  await db.execute(
    sql`drop trigger assignment_audit on conversations; drop function assignment_audit(); drop table assignment_audit;`,
  );
});

/** Staff of the business holding more waiting conversations than their capacity (one statement: one snapshot). */
const overCapacity = (businessId: number) =>
  db.execute<{ id: number; n: number }>(sql`
    select s.id, count(c.id)::int as n from staff s
    join conversations c on c.business_id = s.business_id and c.assigned_staff_id = s.id and c.status = 'open' and c.waiting_since is not null
    where s.business_id = ${businessId}
    group by s.id, s.capacity having count(c.id) > coalesce(s.capacity, ${CAPACITY})`);

/** Runs the business's due sweep jobs as the worker would (their handler is the business's sweep). */
async function runDueSweeps(businessId: number) {
  const due = await db.execute(sql`
    delete from pgboss.job where name = 'assignment.sweep' and state = 'created' and start_after <= now()
      and data->>'businessId' = ${String(businessId)} returning id`);
  if (due.length) await sweepBusiness(businessId);
  return due.length;
}

describe('auto-assignment under concurrency', () => {
  it('two workers, a randomized workload, staff going Away and back: checked against recounts', async () => {
    const random = prng(SEED);
    const pickOne = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
    const b = await assigningBusiness(
      { assignment_policy: random() < 0.5 ? 'round_robin' : 'balanced', assignment_capacity: CAPACITY, hand_back_on_away: true },
      5,
    );
    // Off shift all day, every day: never available.
    const closed = Object.fromEntries(WEEKDAYS.map((d) => [d, []])) as unknown as WeeklyHours;
    const offShift = await createStaff(b.businessId, { schedule: { weekly: closed, exceptions: [] } });
    const team = b.team.map((s) => s.id);
    const clients: { id: number; phoneNumber: string | null; conversationId: number }[] = [];

    let running = true;
    const violations: string[] = [];
    const worker = async (name: string) => {
      while (running) {
        try {
          await dispatchEvents(assignmentHandler);
          if (random() < 0.5) await sweepBusiness(b.businessId);
        } catch (err) {
          violations.push(`${name}: ${(err as Error).message}`);
        }
        await new Promise((r) => setTimeout(r, random() * 15));
      }
    };
    const sampler = async () => {
      while (running) {
        for (const o of await overCapacity(b.businessId)) violations.push(`staff ${o.id} holds ${o.n} waiting`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const workers = [worker('A'), worker('B'), sampler()];

    const state = (conversationId: number) =>
      db.execute<{ assigned: number | null; waiting: boolean; status: string }>(sql`
        select assigned_staff_id as assigned, waiting_since is not null as waiting, status from conversations where id = ${conversationId}`);
    try {
      for (let step = 0; step < 140; step++) {
        const r = random();
        if (r < 0.35 || clients.length < 3) {
          const { client, conversationId } = await newClientTexts(b);
          clients.push({ ...client, conversationId });
        } else if (r < 0.6) {
          const c = pickOne(clients);
          const [s] = await state(c.conversationId);
          if (s!.assigned !== null && s!.waiting) await reply(b.businessId, s!.assigned, c.id);
        } else if (r < 0.7) {
          const c = pickOne(clients);
          const [s] = await state(c.conversationId);
          // Writing again cannot raise anyone's count where the conversation already waits or is nobody's.
          if (s!.status === 'open' && (s!.waiting || s!.assigned === null)) await textIn(b, c, 'Any news?');
        } else if (r < 0.8) {
          const c = pickOne(clients);
          const [s] = await state(c.conversationId);
          if (s!.status === 'open') await setConversationStatus(b.businessId, c.conversationId, { status: 'resolved' }, null);
        } else {
          const who = pickOne(team);
          await setStaffAway(b.businessId, who, random() < 0.5, { type: 'staff', staff_id: who });
        }
      }
      // Everyone back, and a burst of new conversations while the workers run.
      for (const who of team) await setStaffAway(b.businessId, who, false, { type: 'staff', staff_id: who });
      for (let i = 0; i < 6; i++)
        clients.push(await createClient(b.businessId).then(async (c) => ({ ...c, conversationId: await textIn(b, c) })));
    } finally {
      running = false;
      await Promise.all(workers);
    }

    // Quiet: the log handled, and the sweep jobs that came due (retries after a lock was met) run.
    for (let round = 0; round < 10; round++) {
      await settle();
      if ((await runDueSweeps(b.businessId)) === 0 && round > 1) break;
      await new Promise((r) => setTimeout(r, 1100));
    }

    expect(violations).toEqual([]);
    expect(await overCapacity(b.businessId)).toEqual([]);
    const audit = await db.execute<{ staff_id: number; away: boolean; waiting: number }>(sql`
      select a.staff_id, a.away, a.waiting from assignment_audit a join staff s on s.id = a.staff_id where s.business_id = ${b.businessId}`);
    expect(audit.length).toBeGreaterThan(10);
    expect(audit.filter((a) => a.away || a.waiting > CAPACITY || a.staff_id === offShift.id)).toEqual([]);
    // No conversation waits unassigned while someone available has room.
    const [left] = await db.execute<{ unassigned: number; room: number }>(sql`
      select (select count(*)::int from conversations c where c.business_id = ${b.businessId} and c.assigned_staff_id is null
                and c.status = 'open' and c.waiting_since is not null) as unassigned,
             (select count(*)::int from staff s where s.business_id = ${b.businessId} and s.active and not s.away and s.id <> ${offShift.id}
                and (select count(*) from conversations c where c.assigned_staff_id = s.id and c.status = 'open' and c.waiting_since is not null) < ${CAPACITY}) as room`);
    expect(left!.unassigned === 0 || left!.room === 0).toBe(true);
    // Each auto assignment event is one real change from nobody to someone: none given twice.
    const [counts] = await db.execute<{ events: number; audited: number }>(sql`
      select (select count(*)::int from events where business_id = ${b.businessId} and type = 'conversation.assigned'
                and data->>'by' = 'auto' and data->>'staff_id' is not null) as events,
             (select count(*)::int from assignment_audit a join staff s on s.id = a.staff_id where s.business_id = ${b.businessId}) as audited`);
    expect(counts!.events).toBe(counts!.audited);
  }, 240_000);
});
