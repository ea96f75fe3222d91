import { and, eq, sql } from 'drizzle-orm';
import type { z } from 'zod';
import { businesses, reviewRequestCooldowns, reviewRequests } from '@/db/schema';
import { db, type Tx } from '@/server/db/client';
import { AppError } from '@/server/errors';
import { logger } from '@/server/logger';
import type { ReviewRequestSettingsRequest } from '@/server/schemas/appointments';
import { addressesWithMarketingWithdrawn, clientsWithMarketingConsent } from '@/server/services/compliance/consent';
import type { EventActor } from '@/server/services/events/types';
import { CANCELED } from '@/server/services/messages/lifecycle';
import { cancelScheduledMessages } from '@/server/services/messages/schedule';
import { submitEmail, submitSms } from '@/server/services/messages/submit';
import { isSuppressed, suppressionAddress } from '@/server/services/messages/suppression';
import { renderReminder, REVIEW_REQUEST_VARIABLES, type AppointmentStatus } from '@/server/shared/appointments';
import {
  DEFAULT_REVIEW_REQUEST_SETTINGS,
  DEFAULT_REVIEW_TEXT,
  REVIEW_EMAIL_SUBJECT,
  REVIEW_MAX_AGE_DAYS,
  type ReviewRequestChannel,
  type ReviewRequestSettings,
} from '@/server/shared/review-requests';
import type { AppointmentRow } from './read';
import { contextOf, wordsContext, type Context } from './reminders';

/**
 * Review requests (docs/api.md#review-requests): when an appointment becomes `completed`, one text
 * or email with the business's review link, scheduled (send later) `delay_minutes` later as a
 * message with `notification_type` `review_request`, so the send path's rules apply to it as to any
 * such message: marketing consent (at queueing and again at send time), opt-outs, and quiet hours for
 * a text (moved to the window's opening). Every client is asked the same way with the same link:
 * no rating question, nothing decided by what the client said (review gating is forbidden by
 * Google's policy and the FTC's 2024 rule).
 *
 * Why in the status change's own transaction rather than an event-log handler: the request and the
 * change commit together, so a completion never goes unasked for and a request is canceled in the
 * very transaction that takes the appointment out of `completed` (a handler would lag behind it,
 * and a request could go out in between); and a new handler starts at the oldest event the log
 * keeps, so deploying one would ask every client completed in the last 30 days at once.
 *
 * At most once per client per cooldown, durably and race-free: `review_request_cooldowns` holds each
 * client's latest request, taken by one conditional upsert. Of two completions of one client at
 * once, the second waits on the first's row and then finds it taken. The same appointment
 * upserted again finds its active request (and the appointment row is locked by every writer).
 *
 * Lock order, the same on every path: the appointment (its writer), then the client's conversations
 * (taken here before the claim, by the submit path, by a cancel, by needs attention's clear), then
 * the client's cooldown row. Taking the cooldown first would deadlock with a cancel that already
 * holds the conversation.
 */

type SettingsInput = z.output<typeof ReviewRequestSettingsRequest>;

/** The stored settings with the defaults applied. */
function withDefaults(stored: Partial<ReviewRequestSettings> | undefined): ReviewRequestSettings {
  return { ...DEFAULT_REVIEW_REQUEST_SETTINGS, ...stored };
}

function settingsOut(businessId: number, s: ReviewRequestSettings) {
  return {
    business_id: businessId,
    ...s,
    text: s.text ?? DEFAULT_REVIEW_TEXT,
    default_text: DEFAULT_REVIEW_TEXT,
    email_subject: REVIEW_EMAIL_SUBJECT,
  };
}

async function storedSettings(businessId: number, tx: Tx): Promise<ReviewRequestSettings> {
  const [business] = await tx.select({ settings: businesses.settings }).from(businesses).where(eq(businesses.id, businessId));
  if (!business) throw AppError.notFound('Business');
  return withDefaults(business.settings.review_requests);
}

/** GET …/review-requests. */
export async function reviewRequestSettings(businessId: number, tx: Tx = db) {
  return settingsOut(businessId, await storedSettings(businessId, tx));
}

/**
 * PUT …/review-requests: the fields given replace the stored ones (merged in one statement, so two
 * PUTs of different fields both stay), then the whole is checked: enabled needs a review link.
 */
export async function setReviewRequestSettings(businessId: number, input: SettingsInput, tx: Tx = db) {
  return tx.transaction(async (tx) => {
    const given = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
    const [row] = await tx
      .update(businesses)
      .set({
        settings: sql`${businesses.settings} || jsonb_build_object('review_requests',
          coalesce(${businesses.settings}->'review_requests', '{}'::jsonb) || ${JSON.stringify(given)}::jsonb)`,
        updatedAt: sql`now()`,
      })
      .where(eq(businesses.id, businessId))
      .returning({ settings: businesses.settings });
    if (!row) throw AppError.notFound('Business');
    const merged = withDefaults(row.settings.review_requests);
    if (merged.enabled && !merged.review_link) {
      throw AppError.invalid(['body', 'review_link'], 'is required while review requests are enabled');
    }
    return settingsOut(businessId, merged);
  });
}

/**
 * What the appointment's write does to its review request, in the write's transaction: one that
 * becomes `completed` (created so, or from another status) gets one, unless it has one already (see
 * requestOne for when none is written); one that leaves `completed` has its request still scheduled
 * canceled (`appointment_not_completed`), which then no longer holds the client's cooldown. A write
 * that keeps it `completed` changes nothing: only becoming completed asks, so turning review
 * requests on asks nobody about appointments completed before. Returns the message written, if any.
 */
export async function syncReviewRequest(
  a: AppointmentRow,
  previousStatus: AppointmentStatus | null,
  options: { now: Date; actor: EventActor },
  tx: Tx,
) {
  if (previousStatus === 'completed' && a.status !== 'completed') {
    await cancelPendingRequest(a, options.actor, tx);
    return null;
  }
  if (a.status !== 'completed' || previousStatus === 'completed') return null;
  const [active] = await tx
    .select({ messageId: reviewRequests.messageId })
    .from(reviewRequests)
    .where(
      and(eq(reviewRequests.businessId, a.businessId), eq(reviewRequests.appointmentId, a.id), eq(reviewRequests.active, true)),
    );
  if (active) return null;
  const settings = await storedSettings(a.businessId, tx);
  if (!settings.enabled || !settings.review_link) return null;
  const outcome = await requestOne(a, settings as ReviewRequestSettings & { review_link: string }, options.now, tx);
  if (typeof outcome === 'number') return outcome;
  logger.info({ appointment_id: a.id, reason: outcome.skipped }, 'review request not scheduled');
  return null;
}

/** The appointment left `completed`: its request still scheduled is canceled, and frees the client's cooldown. */
async function cancelPendingRequest(a: AppointmentRow, actor: EventActor, tx: Tx) {
  const pending = await tx.execute<{ message_id: number }>(sql`
    select r.message_id from review_requests r join messages m on m.business_id = r.business_id and m.id = r.message_id
    where r.business_id = ${a.businessId} and r.appointment_id = ${a.id} and r.active and m.status = 'scheduled'`);
  if (pending.length === 0) return;
  const ids = pending.map((p) => Number(p.message_id));
  const canceled = (await cancelScheduledMessages(a.businessId, ids, CANCELED.appointmentNotCompleted, actor, tx)).map(
    (c) => c.id,
  );
  if (canceled.length === 0) return;
  await tx.execute(sql`
    update review_requests set active = false
    where business_id = ${a.businessId} and message_id = any(${sql.param(canceled)}::bigint[])`);
  // That client was never asked: the request before it, if any, is older than the cooldown (or it
  // could not have been written), so nothing holds the client now.
  await tx.execute(sql`
    delete from review_request_cooldowns
    where business_id = ${a.businessId} and client_id = ${a.clientId} and message_id = any(${sql.param(canceled)}::bigint[])`);
}

type Reachable = { channel: ReviewRequestChannel; address: string };

/**
 * The channel to ask on: the preferred one, else the other, among those the client has an address
 * for that is not opted out (never to an opted-out number or address); of those, the first with
 * the client's marketing consent. With consent on neither, the first: the send path then stores it
 * `failed` (`no_marketing_consent`), visible in the timeline, as any message without it.
 */
async function reachableChannel(
  a: AppointmentRow,
  c: Context,
  preferred: ReviewRequestChannel,
  tx: Tx,
): Promise<Reachable | null> {
  const order: ReviewRequestChannel[] = preferred === 'sms' ? ['sms', 'email'] : ['email', 'sms'];
  const reachable: Reachable[] = [];
  for (const channel of order) {
    const raw = channel === 'sms' ? c.phone_number : c.client_email;
    if (!raw) continue;
    const address = suppressionAddress(channel, raw);
    if (!(await isSuppressed({ businessId: a.businessId, channel, address }, tx))) reachable.push({ channel, address });
  }
  for (const r of reachable) {
    const [consenting, withdrawn] = await Promise.all([
      clientsWithMarketingConsent(a.businessId, r.channel, [a.clientId], tx),
      addressesWithMarketingWithdrawn(a.businessId, r.channel, [r.address], tx),
    ]);
    if (consenting.has(a.clientId) && withdrawn.size === 0) return r;
  }
  return reachable[0] ?? null;
}

/** The request's message id, or why none was written (each logged, none an error of the change). */
async function requestOne(
  a: AppointmentRow,
  settings: ReviewRequestSettings & { review_link: string },
  now: Date,
  tx: Tx,
): Promise<number | { skipped: string }> {
  if (a.endsAt.getTime() < now.getTime() - REVIEW_MAX_AGE_DAYS * 86_400_000) {
    return { skipped: `the appointment ended more than ${REVIEW_MAX_AGE_DAYS} days ago` };
  }
  const c = await contextOf(a, tx);
  const to = await reachableChannel(a, c, settings.channel, tx);
  if (!to) return { skipped: 'the client has no phone number or email address that is not opted out' };
  const context = { ...wordsContext(a, c), reviewLink: settings.review_link };
  const words = renderReminder(settings.text ?? DEFAULT_REVIEW_TEXT, context, REVIEW_REQUEST_VARIABLES);
  if ('missing' in words) return { skipped: `no value for ${words.missing.map((m) => `{${m}}`).join(', ')}` };
  const subject = renderReminder(REVIEW_EMAIL_SUBJECT, context, REVIEW_REQUEST_VARIABLES);
  const sendAt = new Date(now.getTime() + settings.delay_minutes * 60_000);
  // The client's conversations before the cooldown row (the lock order above).
  await tx.execute(sql`
    select id from conversations where business_id = ${a.businessId} and client_id = ${a.clientId}
    order by id for no key update`);
  try {
    // A savepoint: a refusal of the submit path (nothing to send from) takes the cooldown's claim back with it.
    return await tx.transaction(async (sp) => {
      const claimed = await sp.execute(sql`
        insert into review_request_cooldowns (business_id, client_id, requested_at)
        values (${a.businessId}, ${a.clientId}, ${now.toISOString()}::timestamptz)
        on conflict (business_id, client_id) do update set requested_at = excluded.requested_at, message_id = null
          where review_request_cooldowns.requested_at <= excluded.requested_at - make_interval(days => ${settings.cooldown_days})
        returning 1`);
      if (claimed.length === 0) return { skipped: `the client was asked within the last ${settings.cooldown_days} days` };
      const envelope = {
        category: 'campaign',
        notification_type: 'review_request',
        sender_type: 'system',
        send_at: sendAt,
        // Nothing the client writes meanwhile changes whether they are asked (no gating, even by accident).
        cancel_on_reply: false,
      } as const;
      const item = {
        client_id: a.clientId,
        message: words.text,
        provider_metadata: { appointment_id: a.id, appointment_external_id: a.externalId, review_request: true },
      };
      const queued =
        to.channel === 'sms'
          ? await submitSms(a.businessId, { ...envelope, messages: [item] } as Parameters<typeof submitSms>[1], 'send', {}, sp)
          : await submitEmail(
              a.businessId,
              { ...envelope, messages: [{ ...item, subject: 'text' in subject ? subject.text : '' }] } as Parameters<
                typeof submitEmail
              >[1],
              'send',
              sp,
            );
      const messageId = queued.message_ids[0]!;
      await sp.insert(reviewRequests).values({ businessId: a.businessId, messageId, appointmentId: a.id, clientId: a.clientId });
      await sp
        .update(reviewRequestCooldowns)
        .set({ messageId })
        .where(and(eq(reviewRequestCooldowns.businessId, a.businessId), eq(reviewRequestCooldowns.clientId, a.clientId)));
      return messageId;
    });
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { skipped: `not sendable: ${err.message}` };
  }
}
