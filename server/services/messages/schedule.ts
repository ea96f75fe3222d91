import { and, eq, sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { businesses, locations, messages, type MessageType, type QuietHoursWindow } from '@/db/schema';
import { equalsAny } from '@/db/sql-array';
import { AppError } from '@/server/errors';
import { enqueue } from '@/server/jobs/enqueue';
import { QUEUES } from '@/server/jobs/queues';
import { holdUntil } from '@/server/services/compliance/quiet-hours';
import { refreshLatestMessages } from '@/server/services/conversations/activity';
import { smsSegments } from '@/server/shared/sms-segments';
import { CANCELED, cancelScheduledWith } from './lifecycle';
import { selectMessageItems, toMessageItem } from './serialize';
import {
  MESSAGE_SUMMARY,
  messageSummary,
  recordEvents,
  setEventActor,
  type MessageSummaryRow,
} from '@/server/services/events/record';
import type { EventActor } from '@/server/services/events/types';

/**
 * Send later after the fact (docs/api.md#send-later): cancel or reschedule a `scheduled` message,
 * over REST and from the inbox. Both are conditional on the message still being `scheduled`, so
 * either loses cleanly (409) to the worker's claim, and the claim loses to them.
 */

/** 404 outside the business; 409 naming the status once it is no longer scheduled. */
async function refuse(businessId: number, messageId: number, action: string, tx: Tx): Promise<never> {
  const [row] = await tx
    .select({ status: messages.status })
    .from(messages)
    .where(and(eq(messages.businessId, businessId), eq(messages.id, messageId)))
    .limit(1);
  if (!row) throw AppError.notFound('Message');
  throw new AppError('conflict', `Message ${messageId} is ${row.status}, not scheduled; it cannot be ${action}`);
}

async function answer(messageId: number, tx: Tx = db) {
  const [item] = await selectMessageItems(tx).where(eq(messages.id, messageId));
  return { success: true, data: toMessageItem(item!) };
}

/**
 * Cancels a scheduled message: it is kept, `canceled`, with the reason; its job finds nothing to
 * send. It never reached the client, so the conversation list previews what came before it.
 */
export async function cancelScheduledMessage(businessId: number, messageId: number, actor: EventActor, tx: Tx = db) {
  await tx.transaction(async (tx) => {
    const canceled = await cancelScheduledMessages(businessId, [messageId], CANCELED.byRequest, actor, tx);
    if (canceled.length === 0) await refuse(businessId, messageId, 'canceled', tx);
  });
  return answer(messageId, tx);
}

/**
 * Cancels these scheduled messages of the business with a reason of CANCELED (staff's cancel, an
 * appointment's reminders that no longer fit it); those no longer `scheduled` are left as they are.
 * Their conversations are locked first, in id order, as an inbound reply canceling the same
 * messages takes them (touchConversations, then the cancel): no deadlock between the two. The
 * conversations then preview what came before them. Returns the canceled ones.
 */
export async function cancelScheduledMessages(
  businessId: number,
  messageIds: readonly number[],
  why: { code: string; reason: string },
  actor: EventActor,
  tx: Tx,
): Promise<{ id: number; conversation_id: number }[]> {
  if (messageIds.length === 0) return [];
  await setEventActor(actor, tx);
  await tx.execute(sql`
    select c.id from conversations c
    where c.business_id = ${businessId}
      and c.id in (select m.conversation_id from messages m where m.business_id = ${businessId} and ${equalsAny(sql`m.id`, messageIds, 'bigint')})
    order by c.id for no key update`);
  const canceled = await cancelScheduledWith(businessId, messageIds, why, tx);
  if (canceled.length) await refreshLatestMessages([...new Set(canceled.map((c) => c.conversation_id))], tx);
  return canceled;
}

/**
 * Moves a scheduled message to a new send_at and enqueues a job started after it, in one
 * transaction. The earlier job is left alone: if it runs first, the claim sees a send_at still to
 * come and takes nothing.
 */
export async function rescheduleMessage(businessId: number, messageId: number, requested: Date, actor: EventActor, tx: Tx = db) {
  await tx.transaction(async (tx) => {
    const current = await lockScheduled(businessId, messageId, 'rescheduled', tx);
    await moveSendAt(businessId, messageId, current, requested, actor, tx);
  });
  return answer(messageId, tx);
}

type ScheduledRow = {
  quietHours: QuietHoursWindow | null;
  sendAt: Date | null;
  messageType: MessageType;
  content: string | null;
};

/** The scheduled message, locked (FOR UPDATE) until the transaction ends; 404 or 409 (`action`) otherwise. */
async function lockScheduled(businessId: number, messageId: number, action: string, tx: Tx): Promise<ScheduledRow> {
  const [current] = await tx
    .select({
      quietHours: messages.quietHours,
      sendAt: messages.sendAt,
      messageType: messages.messageType,
      content: messages.content,
    })
    .from(messages)
    .where(scheduledTarget(businessId, messageId))
    .for('update');
  return current ?? refuse(businessId, messageId, action, tx);
}

const scheduledTarget = (businessId: number, messageId: number) =>
  and(eq(messages.businessId, businessId), eq(messages.id, messageId), eq(messages.status, 'scheduled'));

/** A locked scheduled message to `requested` (quiet hours kept), with its job and `message.rescheduled`. */
async function moveSendAt(
  businessId: number,
  messageId: number,
  current: ScheduledRow,
  requested: Date,
  actor: EventActor,
  tx: Tx,
) {
  // A text that keeps to quiet hours (docs/api.md#quiet-hours) moved into the night waits for the morning.
  const sendAt = current.quietHours ? holdUntil(current.quietHours, requested) : requested;
  const held = sendAt.getTime() > requested.getTime();
  // The row is locked and still scheduled: this update takes it.
  const [row] = await tx
    .update(messages)
    .set({ sendAt, holdReason: held ? 'quiet_hours' : null })
    .where(scheduledTarget(businessId, messageId))
    .returning({ channel: messages.channel, conversationId: messages.conversationId });
  await enqueue(tx, row!.channel === 'email' ? QUEUES.emailSendLater : QUEUES.smsSendLater, [
    { data: { messageId, businessId }, startAt: sendAt },
  ]);
  await recordRescheduled(businessId, messageId, current.sendAt, actor, tx);
}

/**
 * The inbox's Edit of a scheduled message (docs/api.md#send-later): a text's words and its send
 * time, in one transaction, only while it is still `scheduled` (a 409 once the worker claimed it:
 * what went is what was there when it went, never a mix). The conversation is locked first, as
 * cancel does. New words are the same message's (its id, request and job stay): `message.edited`,
 * segments counted again, and the conversation's last_message_content when it is the latest; a new
 * time is a reschedule. An email's words are not edited here (its HTML and subject go with them):
 * a 422 on `message`.
 */
export async function editScheduledMessage(
  businessId: number,
  messageId: number,
  change: { content?: string; sendAt?: Date },
  actor: EventActor,
  tx: Tx = db,
) {
  await tx.transaction(async (tx) => {
    const [conversation] = await tx.execute<{ id: number }>(sql`
      select c.id from conversations c join messages m on m.conversation_id = c.id and m.business_id = c.business_id
      where m.id = ${messageId} and m.business_id = ${businessId}
      for no key update of c`);
    if (!conversation) throw AppError.notFound('Message');
    const current = await lockScheduled(businessId, messageId, 'edited', tx);
    if (change.content !== undefined && change.content !== current.content) {
      if (current.messageType !== 'TEXT')
        throw AppError.invalid(['body', 'message'], "Only a text's words can be edited; move an email with a new time");
      const segments = smsSegments(change.content);
      await tx
        .update(messages)
        .set({ content: change.content, segments: segments.segments, encoding: segments.encoding })
        .where(scheduledTarget(businessId, messageId));
      await tx.execute(sql`
        update conversations set last_message_content = ${change.content}
        where business_id = ${businessId} and id = ${conversation.id} and last_message_id = ${messageId}`);
      await recordMessageEvent('message.edited', businessId, messageId, actor, {}, tx);
    }
    if (change.sendAt !== undefined && change.sendAt.getTime() !== current.sendAt?.getTime())
      await moveSendAt(businessId, messageId, current, change.sendAt, actor, tx);
  });
  return answer(messageId, tx);
}

/**
 * Sends a scheduled message now: staff confirmed it (a text held by quiet hours among them), so it
 * no longer keeps to quiet hours. Conditional on `scheduled` like cancel; the claim takes it at once
 * (send_at is now), through a job in the immediate queue.
 */
export async function sendScheduledNow(businessId: number, messageId: number, actor: EventActor, tx: Tx = db) {
  await tx.transaction(async (tx) => {
    const [before] = await tx
      .select({ sendAt: messages.sendAt })
      .from(messages)
      .where(and(eq(messages.businessId, businessId), eq(messages.id, messageId), eq(messages.status, 'scheduled')))
      .for('update');
    const [row] = await tx
      .update(messages)
      .set({ sendAt: sql`now()`, quietHours: null, holdReason: null })
      .where(and(eq(messages.businessId, businessId), eq(messages.id, messageId), eq(messages.status, 'scheduled')))
      .returning({ channel: messages.channel, conversationId: messages.conversationId });
    if (!row) return refuse(businessId, messageId, 'sent now', tx);
    await enqueue(tx, row.channel === 'email' ? QUEUES.emailSend : QUEUES.smsSend, [{ data: { messageId, businessId } }]);
    await recordRescheduled(businessId, messageId, before?.sendAt ?? null, actor, tx);
  });
  return answer(messageId, tx);
}

/** `message.rescheduled` for a scheduled message whose send_at this transaction moved (the row is locked). */
async function recordRescheduled(businessId: number, messageId: number, previous: Date | null, actor: EventActor, tx: Tx) {
  await recordMessageEvent('message.rescheduled', businessId, messageId, actor, { previous }, tx);
}

/** A message event of this module, with the message's fields as they are now (and send_at for a reschedule). */
async function recordMessageEvent(
  type: 'message.rescheduled' | 'message.edited',
  businessId: number,
  messageId: number,
  actor: EventActor,
  { previous = null }: { previous?: Date | null },
  tx: Tx,
) {
  const [row] = await tx.execute<MessageSummaryRow & { send_at: Date }>(sql`
    select ${MESSAGE_SUMMARY}, send_at from messages where business_id = ${businessId} and id = ${messageId}`);
  const about = { businessId, conversationId: row!.conversation_id, messageId, clientId: row!.client_id, actor };
  await recordEvents(
    [
      type === 'message.edited'
        ? { ...about, type, data: messageSummary(row!) }
        : {
            ...about,
            type,
            data: {
              ...messageSummary(row!),
              send_at: new Date(row!.send_at).toISOString(),
              previous_send_at: previous ? new Date(previous).toISOString() : null,
            },
          },
    ],
    tx,
  );
}

/**
 * The time zone Send later's quick picks are in: the conversation's location's, else the
 * business's (docs/api.md#send-later).
 */
export async function sendLaterTimezone(
  businessId: number,
  locationId: number | null,
  tx: Tx = db,
): Promise<{ timezone: string }> {
  const [row] = await tx
    .select({ timezone: sql<string>`coalesce(${locations.timezone}, ${businesses.timezone})` })
    .from(businesses)
    .leftJoin(locations, and(eq(locations.businessId, businesses.id), eq(locations.id, locationId ?? -1)))
    .where(eq(businesses.id, businessId));
  return { timezone: row?.timezone || 'UTC' };
}
