import { sql } from 'drizzle-orm';
import { cut, oneLine } from '@/server/lib/text';
import pLimit from 'p-limit';
import { equalsAny } from '@/db/sql-array';
import { db, type Tx } from '@/server/db/client';
import { env } from '@/server/env';
import type { Logger } from '@/server/logger';
import type { EmailProvider } from '@/server/providers/types';
import { movedWaiting } from '@/server/services/conversations/waiting';
import { staffAvailability, type Availability } from '@/server/services/staff-availability';
import {
  MAX_NOTIFICATION_BODY,
  resolvePreferences,
  type EventNotificationKind,
  type StoredNotificationPreferences,
} from '@/server/shared/notifications';
import { notificationMail, type Mail } from './mail';

/**
 * The email sender (docs/api.md#email-notifications-and-the-waiting-digest): a notification's email
 * waits until `email_due_at` (the handler planned it the business's delay after the event), then
 * goes only if nobody dealt with the conversation meanwhile and its staff member still wants it.
 *
 * A batch of due emails is claimed under FOR UPDATE SKIP LOCKED (workers side by side take
 * different rows) and each is decided in that transaction: `dropped` with why, or `sent` with
 * `email_detail = 'sending'`. Only after that commit does any mail go, so an email is sent at most
 * once: a crash after the commit leaves it `sent`/`sending` (it may or may not have left), never
 * `pending` again. The provider's answer is then written down: `sent` with the Message-ID, or
 * `dropped` with the provider's error (not retried: a notification late by a retry's backoff is
 * worth less than the promise of never two).
 */

/** Emails claimed per transaction; a sweep takes batches until fewer are due, at most MAX_BATCHES. */
const EMAIL_BATCH = 50;
const MAX_BATCHES = 20;
/** Mails in flight at once (the SMTP pool has 5 connections). */
const PARALLEL = 5;

type DueRow = {
  id: number;
  business_id: number;
  staff_id: number;
  kind: EventNotificationKind;
  conversation_id: number | null;
  title: string;
  body: string;
  count: number;
  /** The words of the message it is about (the client's text), for a notification whose own body is empty (an assignment folded over it). */
  message_content: string | null;
  business_name: string;
  staff_active: boolean | null;
  staff_email: string | null;
  preferences: StoredNotificationPreferences | null;
  /** What happened in the conversation meanwhile (null: nothing that drops it). */
  conversation_reason: string | null;
};

/**
 * Why a due email is not to go, from the conversation (what the claim's SQL found) and then from its
 * staff member now: no longer active, no address, email turned off for the kind, away, off shift.
 * Null: it goes.
 */
function dropReason(row: DueRow, availability: Availability | undefined): string | null {
  if (row.conversation_reason) return row.conversation_reason;
  if (!row.staff_active || !availability) return 'the staff member is no longer active';
  if (!row.staff_email?.trim()) return 'the staff member has no email address';
  if (!resolvePreferences(row.preferences)[row.kind].email) return `the staff member turned email off for ${row.kind}`;
  if (availability.away) return 'the staff member is away';
  if (!availability.onShift) return 'the staff member is off shift';
  return null;
}

/**
 * What drops an email from its conversation, first that applies (the notification `n`, its
 * conversation `c`, its message `nm`):
 * - read: the staff member read the notification (opening the conversation reads it), or anyone read
 *   the conversation past its message (`last_read_message_id`);
 * - mention seen: a `mentioned` one whose note the staff member has seen (note_mentions.seen_at);
 * - answered (every kind but `mentioned` and `webhook_disabled`): the conversation is no longer open
 *   (resolved, pending, snoozed), or a reply was written in it from `reply_after` on (and after its
 *   message): the time of the message it is about, or of the event that planned the email (a
 *   conversation assigned to me again after an answer is news again: server/services/notifications/handler.ts). A reply is what ends waiting for a reply
 *   (server/services/conversations/waiting.ts `movedWaiting`, outbound): a staff or API text or
 *   email written to go now, not the system's automatic texts, not one scheduled for later. So a
 *   conversation the client wrote in again after the reply is not answered: its notification was
 *   folded onto the new message, and the email goes about that;
 * - taken: an `unassigned_waiting` one whose conversation has been assigned since.
 */
const CONVERSATION_REASON = sql`case
  when n.read_at is not null then 'read: the notification was read'
  when n.message_id is not null and c.last_read_message_id >= n.message_id then 'read: the conversation was read past its message'
  when n.kind = 'mentioned' and exists (
    select 1 from note_mentions x
    where x.business_id = n.business_id and x.message_id = n.message_id and x.staff_id = n.staff_id and x.seen_at is not null)
    then 'read: the mention was seen'
  when n.kind in ('mentioned', 'webhook_disabled') or c.id is null then null
  when c.status <> 'open' then 'answered: the conversation is ' || c.status
  when exists (
    select 1 from messages m
    where m.conversation_id = c.id and m.business_id = c.business_id
      and m.sent_at >= n.reply_after and m.id > coalesce(n.message_id, 0)
      and m.direction = 'outbound' and ${movedWaiting(sql`m`)})
    then 'answered: a reply was written after it'
  when n.kind = 'unassigned_waiting' and c.assigned_staff_id is not null then 'taken: the conversation was assigned'
  else null end`;

/** Claims up to `limit` due emails: each dropped (with why) or marked `sent`/`sending`, committed. Answers how many were decided and those to send. */
async function claim(now: Date, limit: number, tx: Tx) {
  return tx.transaction(async (tx) => {
    const rows = await tx.execute<DueRow>(sql`
      with due as (
        select id from notifications
        where email_state = 'pending' and email_due_at <= ${now.toISOString()}::timestamptz
        order by email_due_at limit ${limit}
        for update skip locked
      )
      select n.id, n.business_id, n.staff_id, n.kind, n.conversation_id, n.title, n.body, n.count,
             left(nm.content, ${MAX_NOTIFICATION_BODY * 2}) as message_content, b.name as business_name, s.active as staff_active, s.email as staff_email,
             s.notification_preferences as preferences, ${CONVERSATION_REASON} as conversation_reason
      from due join notifications n on n.id = due.id
      join businesses b on b.id = n.business_id
      left join staff s on s.business_id = n.business_id and s.id = n.staff_id
      left join conversations c on c.business_id = n.business_id and c.id = n.conversation_id
      left join messages nm on nm.business_id = n.business_id and nm.id = n.message_id`);
    if (rows.length === 0) return { decided: 0, toSend: [] };
    const availability = new Map<string, Availability>();
    for (const businessId of new Set(rows.map((r) => r.business_id))) {
      for (const a of await staffAvailability(businessId, now, tx)) availability.set(`${businessId}:${a.staffId}`, a);
    }
    const decided = rows.map((r) => ({ row: r, reason: dropReason(r, availability.get(`${r.business_id}:${r.staff_id}`)) }));
    const dropped = decided.filter((d) => d.reason !== null);
    const toSend = decided.filter((d) => d.reason === null).map((d) => d.row);
    if (dropped.length > 0) {
      const payload = JSON.stringify(dropped.map((d) => ({ id: d.row.id, detail: d.reason })));
      await tx.execute(sql`
        update notifications n set email_state = 'dropped', email_detail = d.detail
        from jsonb_to_recordset(${payload}::jsonb) as d(id bigint, detail text) where n.id = d.id`);
    }
    if (toSend.length > 0) {
      await tx.execute(sql`
        update notifications set email_state = 'sent', email_detail = 'sending'
        where ${equalsAny(
          sql`id`,
          toSend.map((r) => r.id),
          'bigint',
        )}`);
    }
    return { decided: rows.length, toSend };
  });
}

/**
 * Sends one staff mail from the system sender (NOTIFICATION_EMAIL_FROM) under the business's name:
 * no conversation message, so `messageId` null. Answers whether it went and what to write down.
 */
export async function sendStaffMail(
  provider: EmailProvider,
  to: { businessId: number; businessName: string; address: string },
  mail: Mail,
): Promise<{ ok: boolean; detail: string; error?: unknown }> {
  try {
    const result = await provider.send({
      messageId: null,
      businessId: to.businessId,
      from: env().notificationEmailFrom,
      fromName: to.businessName,
      to: to.address,
      ...mail,
    });
    return { ok: true, detail: `sent as ${result.messageId}` };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { ok: false, detail: `not sent: the email provider failed: ${reason}`.slice(0, 500), error: err };
  }
}

async function send(row: DueRow, provider: EmailProvider, log: Logger | undefined, tx: Tx): Promise<boolean> {
  const mail = notificationMail({
    businessName: row.business_name,
    kind: row.kind,
    title: row.title,
    body: row.body || cut(oneLine(row.message_content ?? ''), MAX_NOTIFICATION_BODY),
    count: row.count,
    conversationId: row.conversation_id,
    baseUrl: env().publicBaseUrl,
  });
  const to = { businessId: row.business_id, businessName: row.business_name, address: row.staff_email!.trim() };
  const { ok, detail, error } = await sendStaffMail(provider, to, mail);
  if (!ok) log?.warn({ notificationId: row.id, err: error }, 'notification email failed');
  await tx.execute(sql`
    update notifications set email_state = ${ok ? 'sent' : 'dropped'}, email_detail = ${detail} where id = ${row.id}`);
  return ok;
}

/**
 * One sweep: every email due at `now` decided, and those that are to go sent. The worker runs it
 * every 30 s; tests pass their own `now` (a fake clock: the handler planned `email_due_at` from the
 * real one).
 */
export async function sendDueNotificationEmails(
  provider: EmailProvider,
  now: Date = new Date(),
  opts: { batch?: number; log?: Logger } = {},
  tx: Tx = db,
): Promise<{ sent: number; dropped: number; failed: number }> {
  const batch = opts.batch ?? EMAIL_BATCH;
  const totals = { sent: 0, dropped: 0, failed: 0 };
  const limit = pLimit(PARALLEL);
  for (let i = 0; i < MAX_BATCHES; i++) {
    const { decided, toSend } = await claim(now, batch, tx);
    const results = await Promise.all(toSend.map((row) => limit(() => send(row, provider, opts.log, tx))));
    totals.sent += results.filter(Boolean).length;
    totals.failed += results.filter((ok) => !ok).length;
    totals.dropped += decided - toSend.length;
    if (decided < batch) break;
  }
  return totals;
}
