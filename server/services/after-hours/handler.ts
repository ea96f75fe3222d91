import { sql } from 'drizzle-orm';
import { equalsAny } from '@/db/sql-array';
import { db, type Tx } from '@/server/db/client';
import { AppError } from '@/server/errors';
import { logger } from '@/server/logger';
import type { EventHandler, LoggedEvent } from '@/server/services/events/dispatch';
import { submitEmail, submitSms } from '@/server/services/messages/submit';
import { isSuppressed } from '@/server/services/messages/suppression';
import { openingHoursOf } from '@/server/services/opening-hours';
import { DEFAULT_LOCALE, renderAfterHoursReply } from '@/server/shared/after-hours';
import { openingClock } from '@/server/shared/opening-hours';

/**
 * The after-hours answer (docs/api.md#after-hours-answer): a handler of the event log. When a
 * client's text or email is received (`message.received`) while its location is closed, the
 * location's answer (else the business's) goes back at once, as a system message of the
 * conversation through the normal submit path, so it is in the timeline and has its own events.
 *
 * At most one per conversation per closed period: the period began at the clock's last closing
 * before the message, and an answer made since then is found. Handlers of one name never run
 * concurrently (the dispatcher locks its cursor), but the check and the queueing still hold the
 * conversation's advisory lock, so a second copy of the handler, or a test calling this directly,
 * cannot answer twice.
 *
 * Never: to a message not received through a provider's webhook (one recorded by the API was
 * answered elsewhere), to STOP/START/HELP words or a likely opt-out (they have their own answers, or
 * staff decide), to an email a machine wrote (`provider_metadata.automatic`, set on receipt: no
 * mail loops), to an opted-out address, when staff wrote to the conversation from five minutes
 * before the message on, or late: once the closed period is over, or more than an hour after the
 * message (a handler catching up after downtime, or starting on the log's backlog).
 */

export const AFTER_HOURS_HANDLER = 'after-hours-answer';
/** Staff who wrote this recently are there: no automatic answer. */
const STAFF_RECENT_MS = 5 * 60_000;
/** An answer later than this after the message would read oddly: none is sent. */
const MAX_DELAY_MS = 60 * 60_000;

type Inbound = {
  id: number;
  conversation_id: number;
  client_id: number;
  channel: 'sms' | 'email';
  origin: string;
  sent_at: Date;
  from_address: string | null;
  to_address: string | null;
  subject: string | null;
  email_message_id: string | null;
  keyword_class: string | null;
  automatic: string | null;
  location_id: number | null;
  location_name: string | null;
  location_reply: string | null;
  business_name: string;
  settings: { after_hours_reply?: string | null; locale?: string };
};

/** Why no answer went, or the answer's message id. */
export type AfterHoursOutcome = { answered: number } | { skipped: string };

/** The inbound message with what deciding needs: its conversation's location (else its client's) and the business's settings. */
async function inboundOf(businessId: number, messageId: number, tx: Tx): Promise<Inbound | undefined> {
  const [row] = await tx.execute<Inbound>(sql`
    select m.id, m.conversation_id, m.client_id, m.channel, m.origin, m.sent_at, m.from_address, m.to_address,
           m.subject, m.email_message_id,
           m.provider_metadata->>'keyword_class' as keyword_class, m.provider_metadata->>'automatic' as automatic,
           l.id as location_id, l.name as location_name, l.after_hours_reply as location_reply,
           b.name as business_name, b.settings
    from messages m
    join businesses b on b.id = m.business_id
    join conversations c on c.business_id = m.business_id and c.id = m.conversation_id
    left join clients cl on cl.business_id = m.business_id and cl.id = m.client_id
    left join locations l on l.business_id = m.business_id and l.id = coalesce(c.location_id, cl.location_id)
    where m.business_id = ${businessId} and m.id = ${messageId}
      and m.direction = 'inbound' and m.message_type in ('TEXT', 'EMAIL')`);
  return row && { ...row, sent_at: new Date(row.sent_at) };
}

/** Decides for one received message and queues the answer when it is due. `now`: tests move the clock. */
export async function answerAfterHours(
  businessId: number,
  messageId: number,
  now = new Date(),
  tx: Tx = db,
): Promise<AfterHoursOutcome> {
  const m = await inboundOf(businessId, messageId, tx);
  if (!m) return { skipped: 'not an inbound text or email' };
  if (m.origin !== 'webhook') return { skipped: 'not received through a webhook' };
  // A location's own text, else the business's; blank at either: off.
  const template = (m.location_reply ?? m.settings.after_hours_reply ?? '').trim();
  if (!template) return { skipped: 'off' };
  if (m.keyword_class) return { skipped: `keyword (${m.keyword_class})` };
  if (m.automatic) return { skipped: `automatic email (${m.automatic})` };
  if (!m.from_address) return { skipped: 'no sender address' };

  const clock = openingClock(await openingHoursOf(businessId, m.location_id, tx));
  if (clock.isOpen(m.sent_at)) return { skipped: 'open' };
  const nextOpening = clock.nextOpening(m.sent_at);
  if (now.getTime() - m.sent_at.getTime() > MAX_DELAY_MS || (nextOpening && nextOpening <= now)) {
    return { skipped: 'too late' };
  }

  await tx.execute(sql`select pg_advisory_xact_lock(${businessId}, hashtext(${`after-hours:${m.conversation_id}`}))`);
  const periodStart = clock.previousClosing(m.sent_at);
  const [done] = await tx.execute<{ why: string }>(sql`
    select case when m.provider_metadata->>'auto_reply' = 'after_hours' then 'already answered' else 'staff wrote' end as why
    from messages m
    where m.business_id = ${businessId} and m.conversation_id = ${m.conversation_id} and m.direction = 'outbound'
      and ((m.sender_type = 'system' and m.provider_metadata->>'auto_reply' = 'after_hours'
            ${periodStart ? sql`and m.created_at >= ${periodStart.toISOString()}::timestamptz` : sql``})
        or (m.sender_type <> 'system' and m.message_type <> 'NOTE'
            and m.created_at >= ${new Date(m.sent_at.getTime() - STAFF_RECENT_MS).toISOString()}::timestamptz))
    limit 1`);
  if (done) return { skipped: done.why };
  // Nothing is even queued for an opted-out address (the send path would refuse it anyway).
  if (await isSuppressed({ businessId, channel: m.channel, address: m.from_address }, tx)) return { skipped: 'opted out' };

  const text = renderAfterHoursReply(template, {
    businessName: m.business_name,
    locationName: m.location_name,
    nextOpening,
    timeZone: clock.timeZone,
    locale: m.settings.locale ?? DEFAULT_LOCALE,
    now,
  });
  if (!text) return { skipped: 'no opening ahead to name' };
  const item = {
    client_id: m.client_id,
    message: text,
    provider_metadata: { auto_reply: 'after_hours', in_reply_to_message_id: m.id },
  };
  // An answer to the client, not outreach: not held by quiet hours (docs/api.md#quiet-hours).
  const envelope = { category: 'transactional', sender_type: 'system', override_quiet_hours: true } as const;
  if (m.channel === 'sms') {
    const queued = await submitSms(
      businessId,
      { ...envelope, ...(m.to_address ? { from_number: m.to_address } : {}), messages: [{ ...item, to_number: m.from_address }] },
      'send',
      {},
      tx,
    );
    return { answered: queued.message_ids[0]! };
  }
  const subject = m.subject ? (/^re:/i.test(m.subject) ? m.subject : `Re: ${m.subject}`) : m.business_name;
  const queued = await submitEmail(
    businessId,
    { ...envelope, messages: [{ ...item, to_email: m.from_address, subject: subject.slice(0, 998) }] },
    'send',
    tx,
  );
  const id = queued.message_ids[0]!;
  // In the client's thread: the send job, enqueued in this transaction, reads it after the commit.
  if (m.email_message_id) {
    await tx.execute(
      sql`update messages set in_reply_to = ${m.email_message_id} where business_id = ${businessId} and id = ${id}`,
    );
  }
  return { answered: id };
}

const answerable = (e: LoggedEvent) =>
  e.messageId !== null && e.data.direction === 'inbound' && (e.data.channel === 'sms' || e.data.channel === 'email');

/**
 * Of these businesses, those with an answer set anywhere (the business's or a location's): one
 * query a batch, so the businesses that never turned it on cost nothing per message.
 */
async function answering(businessIds: number[], tx: Tx): Promise<Set<number>> {
  if (businessIds.length === 0) return new Set();
  const rows = await tx.execute<{ id: number }>(sql`
    select b.id from businesses b
    where ${equalsAny(sql`b.id`, businessIds, 'int')}
      and (coalesce(btrim(b.settings->>'after_hours_reply'), '') <> ''
           or exists (select 1 from locations l where l.business_id = b.id and btrim(l.after_hours_reply) <> ''))`);
  return new Set(rows.map((r) => r.id));
}

export const afterHoursHandler: EventHandler = {
  name: AFTER_HOURS_HANDLER,
  types: ['message.received'],
  handle: async (events, tx) => {
    const now = new Date();
    const candidates = events.filter(answerable);
    const on = await answering([...new Set(candidates.map((e) => e.businessId))], tx);
    for (const e of candidates.filter((c) => on.has(c.businessId))) {
      try {
        // A savepoint each: an answer refused by the submit path leaves the rest of the batch.
        await tx.transaction((sp) => answerAfterHours(e.businessId, e.messageId!, now, sp));
      } catch (err) {
        // A refusal (no number to send from, a client without an address) is not a reason to stop the log.
        if (!(err instanceof AppError)) throw err;
        logger.warn({ event_id: e.id, message_id: e.messageId, err: err.message }, 'after-hours answer not sent');
      }
    }
  },
};
