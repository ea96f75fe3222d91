import { and, eq, sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { db } from '@/server/db/client';
import { businesses, conversations, messages, staff } from '@/db/schema';
import type { BusinessSettings } from '@/db/schema/businesses';
import { dispatchEvents, type EventHandler } from '@/server/services/events/dispatch';
import { submitSms } from '@/server/services/messages/submit';
import { createBusiness, createClient, createSmsNumber, createStaff } from '@/server/testing/factories';
import { inboundSmsForm, postTwilio, TWILIO_PATHS } from '@/server/testing/webhooks';
import { assignmentHandler } from '@/server/services/assignment/handler';
import { EVENT_HANDLERS } from '@/server/services/events/handlers';

/** Test helpers for auto-assignment: a business with staff, clients who text, and the handler run to the log's end. */

/** A business with an SMS number, the settings given, and `staffCount` staff (no owner: every staff member is one the test made). */
export async function assigningBusiness(
  settings: BusinessSettings,
  staffCount = 3,
  staffFields: Partial<typeof staff.$inferInsert> = {},
) {
  const business = await createBusiness({ settings });
  const number = await createSmsNumber(business.id);
  const team = [];
  for (let i = 0; i < staffCount; i++) team.push(await createStaff(business.id, { name: `Staff ${i + 1}`, ...staffFields }));
  return { business, businessId: business.id, number: number.phoneNumber, team };
}

const lastEventId = async () =>
  Number((await db.execute<{ last: number }>(sql`select coalesce(max(id), 0)::bigint as last from events`))[0]!.last);

/**
 * Runs the assignment handler (or `handler`) until its cursor is past every event committed when
 * called (other test files' transactions on the same server can hold the log's reading bound back a moment).
 * A handler that runs behind another (`after`) reads only what that one has passed, so the one it
 * follows is settled first, to the same bound: settling each with its own bound let a test file's
 * events committed in between hold the second one back until the deadline. What the one it follows
 * wrote while settling (auto-assignment's `conversation.assigned`) is then in the bound too: left
 * out, a later test's settle handed it over (an assignment's notification folded into the previous
 * test's row, which planned an email that test did not expect).
 */
export async function settle(handler: EventHandler = assignmentHandler, last?: number): Promise<void> {
  last ??= await lastEventId();
  if (handler.after) {
    const before = EVENT_HANDLERS.find((h) => h.name === handler.after);
    if (!before) throw new Error(`${handler.name} runs after ${handler.after}, which is not a handler`);
    await settle(before, last);
    const written = await lastEventId();
    if (written > last) await settle(before, (last = written));
  }
  for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
    while ((await dispatchEvents(handler)) > 0);
    const [behind] = await db.execute(sql`
      select 1 from events e, event_handler_cursors c
      where c.handler = ${handler.name} and e.id <= ${last} and (e.tx_id, e.id) > (c.tx_id, c.event_id) limit 1`);
    if (!behind) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the ${handler.name} handler did not catch up`);
}

/** A client's text through Twilio's webhook; returns its conversation id. Does not settle. */
export async function textIn(b: { number: string }, client: { phoneNumber: string | null }, body = 'Hi, can I book?') {
  const form = inboundSmsForm(b.number, client.phoneNumber!, body);
  const res = await postTwilio(TWILIO_PATHS.smsIncoming, form);
  expect(res.status).toBe(200);
  const [row] = await db
    .select({ conversationId: messages.conversationId })
    .from(messages)
    .where(eq(messages.providerMessageId, form.MessageSid!));
  return row!.conversationId;
}

/** A new client of the business texting for the first time. */
export async function newClientTexts(b: { businessId: number; number: string }, fields: { locationId?: number } = {}) {
  const client = await createClient(b.businessId, fields);
  return { client, conversationId: await textIn(b, client) };
}

/** A staff member's reply (ends the conversation's waiting). */
export const reply = (businessId: number, staffId: number, clientId: number) =>
  submitSms(
    businessId,
    { sender_type: 'staff', staff_id: staffId, messages: [{ client_id: clientId, message: 'Sure!' }] } as never,
    'send',
  );

export async function assigneeOf(businessId: number, conversationId: number) {
  const [row] = await db
    .select({ staffId: conversations.assignedStaffId })
    .from(conversations)
    .where(and(eq(conversations.businessId, businessId), eq(conversations.id, conversationId)));
  return row!.staffId;
}

export const setSettings = (businessId: number, settings: BusinessSettings) =>
  db.update(businesses).set({ settings }).where(eq(businesses.id, businessId));

/** The business's `conversation.assigned` events, oldest first. */
export const assignedEvents = (businessId: number) =>
  db.execute<{
    conversation_id: number;
    actor_type: string;
    data: { staff_id: number | null; previous_staff_id: number | null; by: string };
  }>(
    sql`select conversation_id, actor_type, data from events where business_id = ${businessId} and type = 'conversation.assigned' order by id`,
  );

/** The business's assignment sweep jobs waiting to run, with when. */
export const sweepJobs = (businessId: number) =>
  db.execute<{ start_after: Date; singleton_key: string }>(sql`
    select start_after, singleton_key from pgboss.job
    where name = 'assignment.sweep' and state = 'created' and data->>'businessId' = ${String(businessId)}
    order by start_after`);
