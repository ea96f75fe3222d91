import { and, eq, sql } from 'drizzle-orm';
import { appointmentReminders } from '@/db/schema';
import { equalsAny } from '@/db/sql-array';
import type { Tx } from '@/server/db/client';
import { AppError } from '@/server/errors';
import { MAX_SCHEDULE_DAYS } from '@/server/schemas/messages';
import { logger } from '@/server/logger';
import { holdUntil, recipientWindow, sendingRules } from '@/server/services/compliance/quiet-hours';
import type { EventActor } from '@/server/services/events/types';
import { CANCELED } from '@/server/services/messages/lifecycle';
import { cancelScheduledMessages } from '@/server/services/messages/schedule';
import { submitSms } from '@/server/services/messages/submit';
import { isSuppressed } from '@/server/services/messages/suppression';
import { resolveSavedReplies } from '@/server/services/saved-replies';
import { DEFAULT_LOCALE } from '@/server/shared/after-hours';
import {
  durationSeconds,
  REMINDED_STATUSES,
  renderReminder,
  type ReminderContext,
  type ReminderRule,
} from '@/server/shared/appointments';
import type { AppointmentRow } from './read';
import { effectiveRules } from './rules';

/**
 * An appointment's reminders (docs/api.md#reminders): scheduled texts (send later) linked to it by
 * `appointment_reminders`, written through the normal submit path as the system (`category`
 * `reminder`, so held by quiet hours; `cancel_on_reply: false`, so "see you then" does not cancel
 * the next one). `syncReminders` brings them in line with the appointment after every change:
 *
 * - pending reminders that no longer fit are canceled: all of them when the appointment is no
 *   longer booked or confirmed; those written for another start time, or with words that changed
 *   (another client, location, staff member or service: `rewrite`); the asking ones once confirmed;
 *   those of a rule the location no longer has;
 * - then each rule without an active reminder for this start gets one, unless its moment is past
 *   (or more than a year ahead: the send-later bound; a later upsert writes it), quiet hours would hold it until the appointment has begun, the client has no number or opted
 *   out, its text names a variable this appointment has no value for, or the business cannot send
 *   (no number): each logged, none an error of the change.
 *
 * A reminder that went (or that staff canceled, or that failed) stays active for its start, so one
 * rule never reminds twice of one time, however often the appointment is upserted.
 */

type Linked = { message_id: number; before_seconds: number; for_starts_at: Date; asks_confirmation: boolean; status: string };

async function linkedReminders(a: AppointmentRow, tx: Tx): Promise<Linked[]> {
  const rows = await tx.execute<Linked>(sql`
    select r.message_id, r.before_seconds, r.for_starts_at, r.asks_confirmation, m.status
    from appointment_reminders r join messages m on m.business_id = r.business_id and m.id = r.message_id
    where r.business_id = ${a.businessId} and r.appointment_id = ${a.id} and r.active`);
  return rows.map((r) => ({ ...r, message_id: Number(r.message_id), for_starts_at: new Date(r.for_starts_at) }));
}

export type SyncOptions = {
  now: Date;
  actor: EventActor;
  /** The words of pending reminders changed (client, location, staff member or service): write them again. */
  rewrite: boolean;
};

/** Brings the appointment's reminders in line with it (see above). Returns the ids of the reminders scheduled. */
export async function syncReminders(a: AppointmentRow, options: SyncOptions, tx: Tx): Promise<number[]> {
  const reminded = REMINDED_STATUSES.includes(a.status);
  const rules = reminded ? await effectiveRules(a.businessId, a.locationId, tx) : [];
  const ruleSeconds = new Set(rules.map((r) => durationSeconds(r.before)));
  const linked = await linkedReminders(a, tx);
  // Why each pending reminder no longer fits, if it does not.
  const why = (r: Linked) =>
    !reminded
      ? CANCELED.appointmentCanceled
      : options.rewrite || r.for_starts_at.getTime() !== a.startsAt.getTime() || !ruleSeconds.has(r.before_seconds)
        ? CANCELED.appointmentMoved
        : a.status === 'confirmed' && r.asks_confirmation
          ? CANCELED.appointmentConfirmed
          : null;
  const canceled = new Set<number>();
  for (const reason of [CANCELED.appointmentCanceled, CANCELED.appointmentMoved, CANCELED.appointmentConfirmed]) {
    const ids = linked.filter((r) => r.status === 'scheduled' && why(r) === reason).map((r) => r.message_id);
    for (const c of await cancelScheduledMessages(a.businessId, ids, reason, options.actor, tx)) canceled.add(c.id);
  }
  // Their links retired: a canceled reminder no longer counts as this rule's for this start.
  if (canceled.size) {
    await tx
      .update(appointmentReminders)
      .set({ active: false })
      .where(
        and(
          eq(appointmentReminders.businessId, a.businessId),
          equalsAny(appointmentReminders.messageId, [...canceled], 'bigint'),
        ),
      );
  }
  if (!reminded || rules.length === 0) return [];

  const active = linked.filter((r) => !canceled.has(r.message_id) && r.for_starts_at.getTime() === a.startsAt.getTime());
  const due = rules.filter(
    (rule) =>
      !(a.status === 'confirmed' && rule.asks_confirmation) &&
      !active.some((r) => r.before_seconds === durationSeconds(rule.before)),
  );
  if (due.length === 0) return [];
  const context = await contextOf(a, tx);
  const scheduled: number[] = [];
  for (const rule of due) {
    const outcome = await scheduleOne(a, rule, context, options.now, tx);
    if (typeof outcome === 'number') scheduled.push(outcome);
    else
      logger.info({ appointment_id: a.id, before: rule.before, reason: outcome.skipped }, 'appointment reminder not scheduled');
  }
  return scheduled;
}

export type Context = Awaited<ReturnType<typeof contextOf>>;

/**
 * What a reminder's (or a review request's) words and its quiet hours need: the client and its
 * addresses, the business, the location and staff member named.
 */
export async function contextOf(a: AppointmentRow, tx: Tx) {
  const [row] = await tx.execute<{
    client_name: string | null;
    phone_number: string | null;
    client_email: string | null;
    client_timezone: string | null;
    client_location_id: number | null;
    business_name: string;
    business_timezone: string;
    locale: string | null;
    location_name: string | null;
    location_timezone: string | null;
    staff_name: string | null;
  }>(sql`
    select cl.name as client_name, cl.phone_number, cl.email as client_email, cl.timezone as client_timezone, cl.location_id as client_location_id,
           b.name as business_name, b.timezone as business_timezone, b.settings->>'locale' as locale,
           l.name as location_name, l.timezone as location_timezone, s.name as staff_name
    from appointments a
    join businesses b on b.id = a.business_id
    join clients cl on cl.business_id = a.business_id and cl.id = a.client_id
    left join locations l on l.business_id = a.business_id and l.id = a.location_id
    left join staff s on s.business_id = a.business_id and s.id = a.staff_id
    where a.business_id = ${a.businessId} and a.id = ${a.id}`);
  return { ...row!, sending: await sendingRules(a.businessId, tx) };
}

/** One rule's reminder: the scheduled message's id, or why none was written. */
async function scheduleOne(
  a: AppointmentRow,
  rule: ReminderRule,
  c: Context,
  now: Date,
  tx: Tx,
): Promise<number | { skipped: string }> {
  const beforeSeconds = durationSeconds(rule.before)!;
  const sendAt = new Date(a.startsAt.getTime() - beforeSeconds * 1000);
  if (sendAt.getTime() <= now.getTime()) return { skipped: 'its time is past' };
  // As far ahead as anything is scheduled (docs/api.md#send-later); the next upsert within the year writes it.
  if (sendAt.getTime() > now.getTime() + MAX_SCHEDULE_DAYS * 86_400_000) return { skipped: 'more than a year ahead' };
  if (!c.phone_number) return { skipped: 'the client has no phone number' };
  // docs/api.md#quiet-hours: held to the window's opening, as the submit path will; past the start it is pointless.
  const window = recipientWindow(c.sending, {
    timeZone: c.client_timezone,
    phoneNumber: c.phone_number,
    locationId: c.client_location_id,
  });
  if (holdUntil(window, sendAt).getTime() >= a.startsAt.getTime()) return { skipped: 'quiet hours hold it past the start' };
  if (await isSuppressed({ businessId: a.businessId, channel: 'sms', address: c.phone_number }, tx)) {
    return { skipped: 'the client opted out' };
  }
  const text = await reminderText(a, rule, c, tx);
  if ('skipped' in text) return text;
  try {
    // A savepoint: a refusal of the submit path (no number to send from) leaves the appointment's change whole.
    return await tx.transaction(async (sp) => {
      const queued = await submitSms(
        a.businessId,
        {
          category: 'reminder',
          notification_type: rule.asks_confirmation ? 'appointment_confirmation' : 'appointment_reminder',
          sender_type: 'system',
          send_at: sendAt,
          cancel_on_reply: false,
          messages: [
            {
              client_id: a.clientId,
              message: text.text,
              provider_metadata: { appointment_id: a.id, appointment_external_id: a.externalId, reminder_before: rule.before },
            },
          ],
        } as Parameters<typeof submitSms>[1],
        'send',
        {},
        sp,
      );
      const messageId = queued.message_ids[0]!;
      await sp.insert(appointmentReminders).values({
        businessId: a.businessId,
        appointmentId: a.id,
        messageId,
        beforeSeconds,
        forStartsAt: a.startsAt,
        asksConfirmation: rule.asks_confirmation,
      });
      return messageId;
    });
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { skipped: `not sendable: ${err.message}` };
  }
}

/** The rule's words for this appointment: its text, or its saved reply resolved for the client; then the appointment's variables. */
async function reminderText(
  a: AppointmentRow,
  rule: ReminderRule,
  c: Context,
  tx: Tx,
): Promise<{ text: string } | { skipped: string }> {
  let template = rule.text;
  if (rule.saved_reply_id !== null) {
    const [resolved] = await resolveSavedReplies(
      a.businessId,
      [{ savedReplyId: rule.saved_reply_id, clientId: a.clientId }],
      a.staffId,
      tx,
    );
    if (!resolved) return { skipped: `saved reply ${rule.saved_reply_id} no longer exists` };
    if (resolved.body.missing.length) return { skipped: `saved reply has no value for ${resolved.body.missing.join(', ')}` };
    template = resolved.body.text;
  }
  const rendered = renderReminder(template ?? '', wordsContext(a, c));
  if ('missing' in rendered) return { skipped: `no value for ${rendered.missing.map((m) => `{${m}}`).join(', ')}` };
  if (!rendered.text) return { skipped: 'empty text' };
  return rendered;
}

/** The values of an appointment's `{variable}`s (renderReminder's context), on the location's clock. */
export function wordsContext(a: AppointmentRow, c: Context): ReminderContext {
  return {
    startsAt: a.startsAt,
    timeZone: c.location_timezone || c.business_timezone || 'UTC',
    locale: c.locale ?? DEFAULT_LOCALE,
    service: a.service,
    staffName: c.staff_name,
    locationName: c.location_name,
    businessName: c.business_name,
    clientName: c.client_name,
  };
}
