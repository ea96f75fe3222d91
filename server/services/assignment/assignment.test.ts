import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '@/server/db/client';
import { staff } from '@/db/schema';
import { assignConversation, setConversationStatus } from '@/server/services/conversations';
import { EVENT_HANDLERS } from '@/server/services/events/handlers';
import { dispatchEvents } from '@/server/services/events/dispatch';
import { conversationActivityHandler } from '@/server/services/activity/handler';
import { conversationActivity } from '@/server/services/activity/read';
import { describeActivity } from '@/server/shared/activity';
import { conversations } from '@/db/schema';
import { submitSms } from '@/server/services/messages/submit';
import { storeOpeningHours } from '@/server/services/opening-hours';
import { setStaffAway } from '@/server/services/staff-availability';
import { createClient, createLocation, createStaff } from '@/server/testing/factories';
import {
  assignedEvents,
  assigneeOf,
  assigningBusiness,
  newClientTexts,
  reply,
  settle,
  setSettings,
  sweepJobs,
  textIn,
} from '@/server/testing/assignment';
import { openingClock, WEEKDAYS, type Schedule, type WeeklyHours } from '@/server/shared/opening-hours';
import { wallClock } from '@/server/shared/zoned-time';
import { QUEUE_REGISTRATIONS } from '@/workers/registrations';
import { ASSIGNMENT_HANDLER, assignmentHandler } from './handler';
import { sweepBusiness } from './index';

/**
 * Auto-assignment's rules (docs/api.md#auto-assignment), through the real webhooks, the real
 * timeline write path and the real handler: the bar's scenarios and each "never".
 */

const ROUND_ROBIN = { assignment_policy: 'round_robin' } as const;
const clientOf = async (id: number) =>
  (await db.select({ clientId: conversations.clientId }).from(conversations).where(eq(conversations.id, id)))[0]?.clientId;
const staffAway = (businessId: number, staffId: number, away: boolean) =>
  setStaffAway(businessId, staffId, away, { type: 'staff', staff_id: staffId });

describe('auto-assignment', () => {
  it('is a handler of the event log, with a sweep job registered in the worker', () => {
    expect(EVENT_HANDLERS.map((h) => h.name)).toContain(ASSIGNMENT_HANDLER);
    expect(assignmentHandler.types).toContain('message.received');
    expect(QUEUE_REGISTRATIONS.map((r) => r.queue)).toContain('assignment.sweep');
  });

  it('round robin: three available staff each get one of three new conversations, by auto, in the timeline', async () => {
    const b = await assigningBusiness(ROUND_ROBIN);
    const convs = [];
    for (let i = 0; i < 3; i++) {
      convs.push((await newClientTexts(b)).conversationId);
      await settle();
    }
    const owners = await Promise.all(convs.map((c) => assigneeOf(b.businessId, c)));
    expect([...owners].sort()).toEqual(b.team.map((s) => s.id).sort());
    const events = await assignedEvents(b.businessId);
    expect(events).toHaveLength(3);
    for (const e of events) expect(e).toMatchObject({ actor_type: 'system', data: { previous_staff_id: null, by: 'auto' } });
    // The timeline's line (the activity handler's), in words.
    while ((await dispatchEvents(conversationActivityHandler)) > 0);
    const conversation = { businessId: b.businessId, id: convs[0]!, clientId: (await clientOf(convs[0]!))! };
    const [line] = (await conversationActivity(conversation, null)).lines;
    const name = b.team.find((s) => s.id === owners[0])!.name;
    const { who, what } = describeActivity(line!, (iso) => iso);
    expect(`${who} ${what}`).toBe(`Automatically assigned to ${name}`);
    // A fourth goes round again, to the first one given.
    const fourth = (await newClientTexts(b)).conversationId;
    await settle();
    expect(await assigneeOf(b.businessId, fourth)).toBe(await assigneeOf(b.businessId, convs[0]!));
  });

  it('round robin stays even across one sweep that gives many and the sweeps after it', async () => {
    const b = await assigningBusiness(ROUND_ROBIN);
    // Nobody available while ten clients write (away without the switch's event: no sweep when they return).
    await db.update(staff).set({ away: true }).where(eq(staff.businessId, b.businessId));
    for (let i = 0; i < 10; i++) await newClientTexts(b);
    await settle();
    await db.update(staff).set({ away: false }).where(eq(staff.businessId, b.businessId));
    expect((await sweepBusiness(b.businessId)).assigned).toHaveLength(10);
    // 4, 3, 3 in turn; the next two go to the two with 3, in turn (their turns are microseconds apart).
    for (let i = 0; i < 2; i++) {
      await newClientTexts(b);
      await settle();
    }
    const [counts] = await db.execute<{ most: number; fewest: number }>(sql`
      select max(n)::int as most, min(n)::int as fewest from (
        select count(*) as n from conversations where business_id = ${b.businessId} group by assigned_staff_id) c`);
    expect(counts).toEqual({ most: 4, fewest: 4 });
  });

  it('an Away colleague gets none; back, they take the next', async () => {
    const b = await assigningBusiness(ROUND_ROBIN);
    const [ana, ben, cy] = b.team;
    await staffAway(b.businessId, cy!.id, true);
    const given = [];
    for (let i = 0; i < 4; i++) {
      const { conversationId } = await newClientTexts(b);
      await settle();
      given.push(await assigneeOf(b.businessId, conversationId));
    }
    expect(given.filter((s) => s === cy!.id)).toEqual([]);
    expect(new Set(given)).toEqual(new Set([ana!.id, ben!.id]));
    await staffAway(b.businessId, cy!.id, false);
    const next = (await newClientTexts(b)).conversationId;
    await settle();
    // Cy was never given one: their turn is the oldest.
    expect(await assigneeOf(b.businessId, next)).toBe(cy!.id);
  });

  it('a full colleague gets none until they answer; then the oldest waiting conversation goes to them', async () => {
    const b = await assigningBusiness({ ...ROUND_ROBIN, assignment_capacity: 1 }, 2);
    const [ana, ben] = b.team;
    const first = await newClientTexts(b);
    await settle();
    const second = await newClientTexts(b);
    await settle();
    expect(
      new Set([await assigneeOf(b.businessId, first.conversationId), await assigneeOf(b.businessId, second.conversationId)]),
    ).toEqual(new Set([ana!.id, ben!.id]));
    // Both full: two more wait, unassigned, whatever the turn.
    const third = await newClientTexts(b);
    const fourth = await newClientTexts(b);
    await settle();
    expect(await assigneeOf(b.businessId, third.conversationId)).toBeNull();
    expect(await assigneeOf(b.businessId, fourth.conversationId)).toBeNull();
    // Whoever holds the first answers: they have room, and take the oldest waiting (the third).
    const holder = (await assigneeOf(b.businessId, first.conversationId))!;
    await reply(b.businessId, holder, first.client.id);
    await settle();
    expect(await assigneeOf(b.businessId, third.conversationId)).toBe(holder);
    expect(await assigneeOf(b.businessId, fourth.conversationId)).toBeNull();
    // A staff member's own capacity wins over the business's: the other one, given 2, has room
    // (and the older turn) at the next sweep, which any reply wakes.
    const other = holder === ana!.id ? ben! : ana!;
    await db.update(staff).set({ capacity: 2 }).where(eq(staff.id, other.id));
    await reply(b.businessId, holder, third.client.id);
    await settle();
    expect(await assigneeOf(b.businessId, fourth.conversationId)).toBe(other.id);
  });

  it('balanced: the one with the fewest conversations waiting for their reply', async () => {
    const b = await assigningBusiness({ assignment_policy: 'balanced' }, 2);
    const [ana, ben] = b.team;
    // Ana holds two waiting conversations, given by hand.
    for (let i = 0; i < 2; i++) {
      const c = await createClient(b.businessId);
      await assignConversation(b.businessId, await textIn(b, c), ana!.id, null);
    }
    await settle();
    const next = await newClientTexts(b);
    await settle();
    expect(await assigneeOf(b.businessId, next.conversationId)).toBe(ben!.id);
    const after = await newClientTexts(b);
    await settle();
    expect(await assigneeOf(b.businessId, after.conversationId)).toBe(ben!.id);
  });

  it('off (the default) and a location of its own: only where the policy is on, to staff of that location or of none', async () => {
    const b = await assigningBusiness({}, 0);
    const north = await createLocation(b.businessId, { assignmentPolicy: 'round_robin' });
    const south = await createLocation(b.businessId);
    const northStaff = await createStaff(b.businessId, { locationId: north.id });
    await createStaff(b.businessId, { locationId: south.id });
    const atSouth = await newClientTexts(b, { locationId: south.id });
    const atNorth = await newClientTexts(b, { locationId: north.id });
    await settle();
    expect(await assigneeOf(b.businessId, atSouth.conversationId)).toBeNull();
    expect(await assigneeOf(b.businessId, atNorth.conversationId)).toBe(northStaff.id);
  });

  it('conversations that arrive while the business is closed wait, and are assigned at the opening by the job scheduled for it', async () => {
    const b = await assigningBusiness(ROUND_ROBIN, 2);
    const zone = 'America/New_York';
    const w = wallClock(zone, new Date());
    const start = (w.hour * 60 + w.minute + 120) % 1440;
    const schedule: Schedule = {
      weekly: Object.fromEntries(WEEKDAYS.map((d) => [d, [{ start, end: start + 60 }]])) as WeeklyHours,
      exceptions: [],
    };
    await storeOpeningHours(b.businessId, [{ locationId: null, schedule }]);
    const night = [await newClientTexts(b), await newClientTexts(b)];
    await settle();
    for (const c of night) expect(await assigneeOf(b.businessId, c.conversationId)).toBeNull();
    const opening = openingClock({ ...schedule, timeZone: zone }).nextOpening(new Date())!;
    // One job, at the opening, however many texts asked for it.
    const jobs = await sweepJobs(b.businessId);
    expect(jobs.map((j) => new Date(j.start_after).getTime())).toEqual([opening.getTime()]);
    // The job's sweep at that moment (its handler is sweepBusiness of its business).
    const swept = await sweepBusiness(b.businessId, opening);
    expect(swept.assigned).toHaveLength(2);
    expect(new Set(await Promise.all(night.map((c) => assigneeOf(b.businessId, c.conversationId))))).toEqual(
      new Set(b.team.map((s) => s.id)),
    );
  });

  it('our own outbound assigns nothing and schedules nothing; a client’s reply to it is assigned like any message', async () => {
    const b = await assigningBusiness(ROUND_ROBIN);
    const clients = await Promise.all([1, 2, 3, 4, 5].map(() => createClient(b.businessId)));
    await submitSms(
      b.businessId,
      {
        sender_type: 'staff',
        category: 'reminder',
        messages: clients.map((c) => ({ client_id: c.id, message: 'Spring offer!' })),
      } as never,
      'send',
    );
    await settle();
    expect(await assignedEvents(b.businessId)).toEqual([]);
    expect(await sweepJobs(b.businessId)).toEqual([]);
    const [conv] = await db.execute<{ n: number }>(
      sql`select count(*)::int as n from conversations where business_id = ${b.businessId} and assigned_staff_id is not null`,
    );
    expect(conv!.n).toBe(0);
    const answered = await textIn(b, clients[2]!, 'Yes please!');
    await settle();
    expect(await assigneeOf(b.businessId, answered)).not.toBeNull();
    expect(await assignedEvents(b.businessId)).toHaveLength(1);
  });

  it('never over a manual assignment, even to someone away or full', async () => {
    const b = await assigningBusiness({ ...ROUND_ROBIN, assignment_capacity: 1 }, 2);
    const [ana] = b.team;
    const c = await createClient(b.businessId);
    const conv = await textIn(b, c);
    await assignConversation(b.businessId, conv, ana!.id, null);
    await staffAway(b.businessId, ana!.id, true);
    await textIn(b, c, 'Hello again?');
    await settle();
    expect(await assigneeOf(b.businessId, conv)).toBe(ana!.id);
    expect((await assignedEvents(b.businessId)).map((e) => e.data.by)).toEqual(['manual']);
  });

  it('a manual unassignment puts the conversation back to assignment', async () => {
    const b = await assigningBusiness(ROUND_ROBIN, 1);
    const { conversationId } = await newClientTexts(b);
    await settle();
    expect(await assigneeOf(b.businessId, conversationId)).toBe(b.team[0]!.id);
    await staffAway(b.businessId, b.team[0]!.id, true);
    const other = await createStaff(b.businessId);
    await assignConversation(b.businessId, conversationId, null, null);
    await settle();
    expect(await assigneeOf(b.businessId, conversationId)).toBe(other.id);
  });

  it('a reopened conversation keeps its assignee, unless they are away and hand-back is on', async () => {
    const b = await assigningBusiness(ROUND_ROBIN, 2);
    const [ana, ben] = b.team;
    const { client, conversationId } = await newClientTexts(b);
    await settle();
    const holder = (await assigneeOf(b.businessId, conversationId))!;
    const other = holder === ana!.id ? ben! : ana!;
    await reply(b.businessId, holder, client.id);
    await setConversationStatus(b.businessId, conversationId, { status: 'resolved' }, holder);
    // Reopened by the client, holder away but hand-back off: kept.
    await staffAway(b.businessId, holder, true);
    await textIn(b, client, 'One more question');
    await settle();
    expect(await assigneeOf(b.businessId, conversationId)).toBe(holder);
    // Hand-back on: the next reopening gives it to a colleague.
    await setSettings(b.businessId, { ...ROUND_ROBIN, hand_back_on_away: true });
    await setConversationStatus(b.businessId, conversationId, { status: 'resolved' }, holder);
    await textIn(b, client, 'And another');
    await settle();
    expect(await assigneeOf(b.businessId, conversationId)).toBe(other.id);
    const events = await assignedEvents(b.businessId);
    expect(events.slice(-2).map((e) => e.data)).toEqual([
      { conversation_id: conversationId, staff_id: null, previous_staff_id: holder, by: 'auto' },
      { conversation_id: conversationId, staff_id: other.id, previous_staff_id: null, by: 'auto' },
    ]);
  });

  it('going Away hands back one’s waiting conversations when the business says so, and not the answered ones', async () => {
    const b = await assigningBusiness({ ...ROUND_ROBIN, hand_back_on_away: true }, 1);
    const [ana] = b.team;
    const waiting = await newClientTexts(b);
    const answered = await newClientTexts(b);
    await settle();
    await reply(b.businessId, ana!.id, answered.client.id);
    const ben = await createStaff(b.businessId);
    await staffAway(b.businessId, ana!.id, true);
    await settle();
    expect(await assigneeOf(b.businessId, waiting.conversationId)).toBe(ben.id);
    expect(await assigneeOf(b.businessId, answered.conversationId)).toBe(ana!.id);
  });

  it('going Away without hand-back keeps one’s conversations', async () => {
    const b = await assigningBusiness(ROUND_ROBIN, 1);
    const waiting = await newClientTexts(b);
    await settle();
    await createStaff(b.businessId);
    await staffAway(b.businessId, b.team[0]!.id, true);
    await settle();
    expect(await assigneeOf(b.businessId, waiting.conversationId)).toBe(b.team[0]!.id);
  });
});
