import { sql } from 'drizzle-orm';
import { flagNeedsAttention } from '@/server/services/conversations/needs-attention';
import { db, type Tx } from '@/server/db/client';
import { AppError } from '@/server/errors';
import { logger } from '@/server/logger';
import type { EventHandler, LoggedEvent } from '@/server/services/events/dispatch';
import { classifyInbound } from '@/server/services/compliance/opt-out-words';
import { readAppointmentReply, type AppointmentReplyIntent } from '@/server/shared/appointment-replies';
import { cancelAppointment, confirmAppointment, openConfirmationReminder, requestCancel, requestReschedule } from './outcomes';

/**
 * Replies to reminders (docs/api.md#replies-to-reminders): a handler of the event log. A client's
 * text (`message.received`, SMS) sent after a reminder that asked for confirmation went out to that
 * number, and before its appointment starts, is read against it (openConfirmationReminder, the most
 * recent such reminder): confirm → the appointment is confirmed; reschedule or cancel → the request
 * is logged and the conversation flagged "Needs attention" with the appointment (a cancel request
 * cancels it instead when the business's `cancel_on_request` setting is on); unclear → flagged, no
 * automatic answer; an opt-out (already handled on receipt by the texting rules) → the appointment
 * stays unconfirmed, flagged.
 *
 * The reading is written on the message (`provider_metadata.appointment_reply`: the appointment, the
 * intent, what matched): the timeline's "Confirmed by reply", and what makes a second reading of the
 * same message (a replayed event, a second copy of the handler) change nothing.
 */

export const APPOINTMENT_REPLIES_HANDLER = 'appointment-replies';

/** What the message says it did to its appointment (provider_metadata.appointment_reply). */
type AppointmentReplyRecord = {
  appointment_id: number;
  external_id: string;
  reminder_message_id: number;
  intent: AppointmentReplyIntent;
  matched: string | null;
  possible_opt_out?: string;
  /** The appointment was canceled on the request (the `cancel_on_request` setting). */
  canceled?: boolean;
};

type ReplyOutcome = { read: AppointmentReplyRecord } | { skipped: string };

type Inbound = {
  id: number;
  conversation_id: number;
  client_id: number | null;
  channel: string;
  message_type: string;
  content: string | null;
  from_address: string | null;
  sent_at: Date;
  done: boolean;
  cancel_on_request: boolean;
};

/** Reads one received message against its open reminder and acts on it. */
export async function readReplyToReminder(businessId: number, messageId: number, tx: Tx = db): Promise<ReplyOutcome> {
  // The message row locked: two readers of one message (a replay racing the handler) take turns.
  const [m] = await tx.execute<Inbound>(sql`
    select m.id, m.conversation_id, m.client_id, m.channel, m.message_type, m.content, m.from_address, m.sent_at,
           (m.provider_metadata ? 'appointment_reply') as done,
           coalesce((b.settings->>'cancel_on_request')::boolean, false) as cancel_on_request
    from messages m join businesses b on b.id = m.business_id
    where m.business_id = ${businessId} and m.id = ${messageId} and m.direction = 'inbound'
    for no key update of m`);
  if (!m || m.channel !== 'sms' || m.message_type !== 'TEXT') return { skipped: 'not an inbound text' };
  if (m.done) return { skipped: 'already read' };
  if (m.client_id === null || !m.from_address) return { skipped: 'no client' };
  const sentAt = new Date(m.sent_at);
  const open = await openConfirmationReminder(businessId, m.client_id, m.from_address, sentAt, tx);
  if (!open) return { skipped: 'no open reminder' };

  const body = m.content ?? '';
  const reading = readAppointmentReply(body, classifyInbound(body));
  const record: AppointmentReplyRecord = {
    appointment_id: open.appointmentId,
    external_id: open.externalId,
    reminder_message_id: open.reminderMessageId,
    intent: reading.intent,
    matched: 'matched' in reading ? reading.matched : null,
    ...('possibleOptOut' in reading && reading.possibleOptOut ? { possible_opt_out: reading.possibleOptOut } : {}),
  };
  const source = { actor: { type: 'client' as const }, messageId: m.id };
  const a = open.appointmentId;
  switch (reading.intent) {
    case 'confirm':
      await confirmAppointment(businessId, a, source, tx);
      break;
    case 'reschedule':
      await requestReschedule(businessId, a, source, tx);
      await flagNeedsAttention(businessId, m.conversation_id, { reason: 'reschedule', appointmentId: a, at: sentAt }, tx);
      break;
    case 'cancel':
      await requestCancel(businessId, a, source, tx);
      if (m.cancel_on_request) {
        await cancelAppointment(businessId, a, source, tx);
        record.canceled = true;
      } else {
        await flagNeedsAttention(businessId, m.conversation_id, { reason: 'cancel', appointmentId: a, at: sentAt }, tx);
      }
      break;
    case 'unclear':
      // Once confirmed, a "thanks!" or "see you" that reads unclear is an ordinary message, not staff's to decide.
      if (open.status === 'booked')
        await flagNeedsAttention(businessId, m.conversation_id, { reason: 'unclear', appointmentId: a, at: sentAt }, tx);
      break;
    case 'opt_out':
      // The texting rules opted the number out on receipt; the appointment stays as it is, unconfirmed.
      await flagNeedsAttention(businessId, m.conversation_id, { reason: 'opt_out', appointmentId: a, at: sentAt }, tx);
      break;
  }
  await tx.execute(sql`
    update messages set provider_metadata = coalesce(provider_metadata, '{}'::jsonb)
      || jsonb_build_object('appointment_reply', ${JSON.stringify(record)}::jsonb)
    where business_id = ${businessId} and id = ${m.id}`);
  return { read: record };
}

const readable = (e: LoggedEvent) => e.messageId !== null && e.data.direction === 'inbound' && e.data.channel === 'sms';

/**
 * The batch's replies worth reading: from a client with an appointment still to come when they
 * wrote, booked or confirmed, whose asking reminder for its start stands (pending, or gone: active)
 * — what openConfirmationReminder needs, but the reminder having gone. One statement a batch, an
 * index probe per reply (the client's appointments by start): a business that does not use
 * appointments, or a client with none ahead, costs nothing more.
 */
export async function repliesToRead(events: LoggedEvent[], tx: Tx): Promise<LoggedEvent[]> {
  const candidates = events.filter(readable);
  if (candidates.length === 0) return [];
  const rows = await tx.execute<{ id: number }>(sql`
    select m.id
    from unnest(${sql.param(candidates.map((e) => e.businessId))}::int[],
                ${sql.param(candidates.map((e) => e.messageId))}::bigint[]) as e(business_id, message_id)
    join messages m on m.business_id = e.business_id and m.id = e.message_id
    where exists (
      select 1 from appointments a
      join appointment_reminders r on r.business_id = a.business_id and r.appointment_id = a.id
      where a.business_id = m.business_id and a.client_id = m.client_id and a.starts_at > m.sent_at
        and a.status in ('booked', 'confirmed')
        and r.asks_confirmation and r.active and r.for_starts_at = a.starts_at)`);
  const worth = new Set(rows.map((r) => Number(r.id)));
  return candidates.filter((e) => worth.has(e.messageId!));
}

export const appointmentRepliesHandler: EventHandler = {
  name: APPOINTMENT_REPLIES_HANDLER,
  types: ['message.received'],
  handle: async (events, tx) => {
    for (const e of await repliesToRead(events, tx)) {
      try {
        // A savepoint each: one reply that cannot be read leaves the rest of the batch.
        await tx.transaction((sp) => readReplyToReminder(e.businessId, e.messageId!, sp));
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        logger.warn({ event_id: e.id, message_id: e.messageId, err: err.message }, 'appointment reply not read');
      }
    }
  },
};
