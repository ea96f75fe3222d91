import { and, eq, sql, type SQL } from 'drizzle-orm';
import { equalsAny } from '@/db/sql-array';
import { db, type Tx } from '@/server/db/client';
import { messages, SENDABLE_ORIGINS, type Channel, type MessageStatus, type Provider } from '@/db/schema';
import { enqueue } from '@/server/jobs/enqueue';
import { QUEUES, type SendTarget } from '@/server/jobs/queues';
import { ERROR_STATUSES, IN_FLIGHT_STATUSES, isStatusIn } from '@/server/shared/message-statuses';
import { twilioErrorMessage } from '@/server/shared/provider-errors';
import { optOutRecipientsOf } from './suppression';
import { setEventActor } from '@/server/services/events/record';
import type { EventActor } from '@/server/services/events/types';

/**
 * The life of a message after it is created: the one module that changes `messages.status` (a row
 * is created with its first status by the module that inserts it). The database logs every status
 * change as an event (migration 0025's trigger), and the inbox's live streams read it from the log.
 *
 *   initiated ─┐
 *              ▼        claim             provider accepted
 *           queued ───────────▶ sending ───────────────────▶ sent ──callbacks──▶ delivered, read,
 *              ▲                   │                                             undelivered, failed…
 *              │  transient error  │ permanent error, or out of attempts
 *              └───────────────────┤──────────────────────▶ failed (with the reason)
 *   new attempt (retry, send by id) of initiated / failed / undelivered
 *
 * Send later (docs/api.md#send-later): a `scheduled` message is claimed straight to `sending` once
 * its send_at has passed, or moves to `canceled` (staff, the API, or the client writing in first).
 *
 * A status only moves forward by rank (the database function message_status_rank, compared in the
 * same UPDATE, so late, duplicate and reordered callbacks cannot move a message back). A recorded
 * message never moves into `queued` or `sending` (a provider's callback for its id may say so): it
 * would sit "in flight" for good, since no send worker ever takes it (docs/api.md#record-mode). Two moves go
 * back to `queued`, both guarded by the status they leave: a transient send error (the same
 * attempt, retried by its job) and a new attempt.
 */

/** Why a message to an opted-out address (suppression.ts) is recorded `failed` and not sent. */
export const OPTED_OUT = {
  code: 'opted_out',
  reason: {
    sms: 'The client has opted out of SMS (replied STOP); not sent',
    email: 'The client has opted out of email; not sent',
  } satisfies Record<Extract<Channel, 'sms' | 'email'>, string>,
} as const;

/**
 * Why a campaign, marketing or review-request message (server/shared/consent.ts) to a client
 * without marketing consent on record for its channel is recorded `failed` and not sent.
 */
export const NO_MARKETING_CONSENT = {
  code: 'no_marketing_consent',
  reason: {
    sms: 'The client has not given marketing consent for texts; marketing, campaign and review-request texts are not sent without it (record it on the client: consents)',
    email:
      'The client has not given marketing consent for email; marketing, campaign and review-request emails are not sent without it (record it on the client: consents)',
  } satisfies Record<Extract<Channel, 'sms' | 'email'>, string>,
} as const;

type Touched = { id: number; business_id: number; conversation_id: number };

// ─── Sending ─────────────────────────────────────────────────────────────────────────────────────

/**
 * Claims messages for sending, as common table expressions for the worker's one statement that
 * also reads what it sends (one round trip per batch). Adds `attempt (id, stuck_since)`:
 * - the ids moved `queued` (or due `scheduled`) → `sending` here, in one conditional UPDATE, so no two workers send one
 *   message (`stuck_since` null);
 * - the ids found `sending` without a provider id: an attempt claimed them and died before
 *   recording the provider's answer, so the provider must be asked whether they went out before
 *   anything is resent (`stuck_since` = when that attempt claimed them).
 * Ids in neither were handled already (or are no longer sendable). The statement's other reads see
 * the rows as they were before the claim, which is all a sender needs (recipient, content).
 */
export function claimForSendingCtes(targets: SendTarget[]): SQL {
  // A `scheduled` message is claimed too, once due (docs/api.md#send-later): its job was started
  // after send_at, but a job of an earlier send_at (rescheduled later since) must find nothing.
  // Its sent_at becomes the moment it goes, so sent_at − send_at shows any delay (a worker down).
  // A target with an attempt number (a bulk chunk's) is only that attempt of its message: retried
  // since, the message has a job of its own for its new attempt, and this one must not touch it.
  // Only a message the product queued itself is ever sent (SENDABLE_ORIGINS): a recorded one whose
  // status reads `queued` or `sending` mirrors another system's send (docs/api.md#record-mode).
  const sendable = sql.raw(`m.origin in (${SENDABLE_ORIGINS.map((o) => `'${o}'`).join(', ')})`);
  return sql`target as (
      select t.id, t.attempts
      from unnest(${sql.param(targets.map((t) => t.id))}::bigint[], ${sql.param(targets.map((t) => t.attempts))}::int[]) t(id, attempts)
    ), claimed as (
      update messages m set status = 'sending', status_updated_at = now(),
        sent_at = case when m.status = 'scheduled' then now() else m.sent_at end
      from target t
      where m.id = t.id and (t.attempts is null or m.attempts = t.attempts) and ${sendable}
        and (m.status = 'queued' or (m.status = 'scheduled' and m.send_at <= now()))
      returning m.id
    ), attempt as (
      -- went_later_in: the conversation of a message claimed from scheduled (this statement reads
      -- the rows as they were before the claim): it is now that conversation's latest message, and
      -- the caller refreshes it (refreshLatestMessages in conversations/activity.ts) once the claim committed.
      select c.id, null::timestamptz as stuck_since, case when m.status = 'scheduled' then m.conversation_id end as went_later_in
      from claimed c join messages m on m.id = c.id
      union all
      select m.id, m.status_updated_at, null from messages m join target t on m.id = t.id
      where (t.attempts is null or m.attempts = t.attempts) and ${sendable}
        and m.status = 'sending' and m.provider_message_id is null
    )`;
}

/** The conversations of the messages a claim took from `scheduled` (its `attempt.went_later_in`). */
export const wentLaterIn = (rows: Iterable<{ went_later_in: number | null }>): number[] =>
  [...rows].flatMap((r) => (r.went_later_in === null ? [] : [r.went_later_in]));

/**
 * Stores each email's Message-ID before the SMTP conversation starts: an email later found
 * `sending` with one may have reached the server (SMTP cannot be asked), one without never did.
 */
export async function assignEmailMessageIds(ids: Map<number, string>, tx: Tx = db): Promise<void> {
  if (ids.size === 0) return;
  await tx.execute(sql`
    update messages m set email_message_id = v.mid
    from unnest(${sql.param([...ids.keys()])}::bigint[], ${sql.param([...ids.values()])}::text[]) as v(id, mid)
    where m.id = v.id`);
}

export type SentResult = {
  messageId: number;
  providerMessageId: string;
  /** What the provider says now: at least `sent`; reconciliation may find it further along. */
  status: MessageStatus;
  segments: number | null;
  emailMessageId?: string;
  /**
   * The provider's (Twilio's) error code, when reconciliation finds the message already failed
   * there; `error_message` gets its plain words (server/shared/provider-errors.ts).
   */
  errorCode?: string | null;
};

export type SendOutcomes = {
  sent: SentResult[];
  /** Given up: `failed` with the code and reason; `optedOut` also opts the recipient's address out (suppression.ts). */
  failed: { messageId: number; code: string; message: string; optedOut?: boolean }[];
  /** A transient error: back to `queued` for the same attempt, which its job retries. */
  requeue: number[];
};

/**
 * Writes a batch's outcomes in a few set-based statements (only messages still in flight move), in
 * one transaction: a message is never seen `failed` by 21610 before its recipient is opted out.
 */
export async function recordSendResults(provider: Provider, outcomes: SendOutcomes, tx: Tx = db): Promise<void> {
  await tx.transaction((tx) => writeSendResults(provider, outcomes, tx));
}

async function writeSendResults(provider: Provider, outcomes: SendOutcomes, tx: Tx): Promise<void> {
  const { sent, failed, requeue } = outcomes;
  const touched: Touched[] = [];
  if (sent.length) {
    const col = <T>(f: (r: SentResult) => T) => sql.param(sent.map(f));
    const rows = await tx.execute<Touched>(sql`
      update messages m set
        provider = ${provider},
        provider_message_id = v.sid,
        email_message_id = coalesce(v.email_message_id, m.email_message_id),
        status = case when message_status_rank(v.status, m.message_type) > message_status_rank('sent', m.message_type)
                      then v.status else 'sent' end,
        segments = coalesce(v.segments, m.segments),
        -- Reconciliation can find a message that already failed at the provider: keep why.
        error_code = case when v.status = any(${sql.param([...ERROR_STATUSES])}::text[]) then coalesce(v.error_code, 'provider_failed') end,
        error_message = case when v.status = any(${sql.param([...ERROR_STATUSES])}::text[])
                             then coalesce(v.error_message, 'The provider reports the message ' || v.status) end,
        status_updated_at = now()
      from unnest(${col((r) => r.messageId)}::bigint[], ${col((r) => r.providerMessageId)}::text[], ${col((r) => r.status)}::text[],
                  ${col((r) => r.segments)}::int[], ${col((r) => r.emailMessageId ?? null)}::text[], ${col((r) => r.errorCode ?? null)}::text[],
                  ${col((r) => (r.errorCode ? twilioErrorMessage(r.errorCode) : null))}::text[])
           as v(id, sid, status, segments, email_message_id, error_code, error_message)
      where m.id = v.id and m.status = 'sending'
      returning m.id, m.business_id, m.conversation_id`);
    touched.push(...rows);
  }
  if (failed.length) {
    const rows = await tx.execute<Touched>(sql`
      update messages m set status = 'failed', provider = ${provider}, error_code = v.code, error_message = v.msg, status_updated_at = now()
      from unnest(${sql.param(failed.map((r) => r.messageId))}::bigint[], ${sql.param(failed.map((r) => r.code))}::text[],
                  ${sql.param(failed.map((r) => r.message))}::text[]) as v(id, code, msg)
      where m.id = v.id and m.status = any(${sql.param([...IN_FLIGHT_STATUSES])}::text[])
      returning m.id, m.business_id, m.conversation_id`);
    touched.push(...rows);
    // The provider refused them because the recipient opted out (Twilio 21610): suppress that address.
    await optOutRecipientsOf(
      failed.filter((r) => r.optedOut).map((r) => r.messageId),
      'provider_error',
      tx,
    );
  }
  if (requeue.length) {
    await tx.execute(sql`update messages set status = 'queued', status_updated_at = now()
                         where id = any(${sql.param(requeue)}::bigint[]) and status = 'sending'`);
  }
}

/**
 * A new attempt of stored outbound messages (retry, or a send request naming them): back to
 * `queued` when their status is one of `from`, in one conditional UPDATE, so concurrent callers
 * never queue a message twice. A recorded message re-queued so becomes a send (origin `send`): the
 * caller asked for it to go, and the send worker's checks apply to it as to any send. The earlier attempt's provider id is moved aside: its late callbacks
 * no longer match the message, a crash of the new attempt is recognised (`sending` without a
 * provider id) and reconciliation never takes the earlier attempt for the new one. The caller
 * enqueues the send jobs for the rows returned, in the same transaction.
 */
export async function startNewAttempt(
  businessId: number,
  ids: number[],
  from: readonly MessageStatus[],
  extra: { requestId?: string } = {},
  tx: Tx = db,
): Promise<{ id: number; channel: Channel | null; conversationId: number; attempts: number }[]> {
  if (ids.length === 0) return [];
  const rows = await tx
    .update(messages)
    .set({
      status: 'queued',
      origin: 'send',
      errorCode: null,
      errorMessage: null,
      attempts: sql`${messages.attempts} + 1`,
      statusUpdatedAt: sql`now()`,
      previousProviderMessageIds: sql`case when ${messages.providerMessageId} is null then ${messages.previousProviderMessageIds}
        else array_append(coalesce(${messages.previousProviderMessageIds}, '{}'), ${messages.providerMessageId}) end`,
      providerMessageId: null,
      emailMessageId: null,
      ...(extra.requestId ? { requestId: extra.requestId } : {}),
    })
    .where(
      and(
        eq(messages.businessId, businessId),
        equalsAny(messages.id, ids, 'bigint'),
        equalsAny(messages.status, [...from], 'text'),
      ),
    )
    .returning({
      id: messages.id,
      channel: messages.channel,
      conversationId: messages.conversationId,
      attempts: messages.attempts,
    });
  return rows;
}

// ─── Send later ──────────────────────────────────────────────────────────────────────────────────

/** Why a scheduled message was canceled (kept in error_code / error_message, shown in the timeline). */
export const CANCELED = {
  byRequest: { code: 'canceled', reason: 'Canceled before it was sent' },
  clientReplied: { code: 'client_replied', reason: 'Canceled: the client replied first' },
  // An appointment's reminders (docs/api.md#reminders) that no longer fit it.
  appointmentMoved: { code: 'appointment_moved', reason: 'Canceled: the appointment changed' },
  appointmentCanceled: { code: 'appointment_canceled', reason: 'Canceled: the appointment is canceled or over' },
  appointmentConfirmed: { code: 'appointment_confirmed', reason: 'Canceled: the client confirmed the appointment' },
  // A review request (docs/api.md#review-requests) whose appointment left `completed` before it went.
  appointmentNotCompleted: { code: 'appointment_not_completed', reason: 'Canceled: the appointment is no longer completed' },
} as const;

/** `scheduled` → `canceled` for the rows `where` picks among the scheduled ones, with the reason. */
async function cancelWhere(where: SQL | undefined, why: { code: string; reason: string }, tx: Tx): Promise<Touched[]> {
  const rows = await tx
    .update(messages)
    .set({ status: 'canceled', statusUpdatedAt: sql`now()`, errorCode: why.code, errorMessage: why.reason })
    .where(and(where, eq(messages.status, 'scheduled')))
    .returning({ id: messages.id, business_id: messages.businessId, conversation_id: messages.conversationId });
  return rows;
}

/**
 * Cancels these scheduled messages of the business with a reason of CANCELED; those no longer
 * `scheduled` are left as they are. A conditional UPDATE, so a cancel racing the worker's claim has
 * exactly one winner (the claim takes `scheduled` rows only, and so does this). Returns the
 * canceled ones. Callers lock the conversations first (schedule.ts, cancelScheduledMessages).
 */
export async function cancelScheduledWith(
  businessId: number,
  messageIds: readonly number[],
  why: { code: string; reason: string },
  tx: Tx,
): Promise<{ id: number; conversation_id: number }[]> {
  if (messageIds.length === 0) return [];
  const where = and(eq(messages.businessId, businessId), equalsAny(messages.id, [...messageIds], 'bigint'));
  return (await cancelWhere(where, why, tx)).map((r) => ({ id: r.id, conversation_id: r.conversation_id }));
}

/**
 * Cancel on reply: the client wrote in, so the conversation's scheduled messages that asked for it
 * are canceled in one statement (a reminder never crosses the client's own reply). Returns their ids.
 */
export async function cancelScheduledOnReply(businessId: number, conversationId: number, tx: Tx): Promise<number[]> {
  const where = and(
    eq(messages.businessId, businessId),
    eq(messages.conversationId, conversationId),
    eq(messages.cancelOnReply, true),
  );
  return (await cancelWhere(where, CANCELED.clientReplied, tx)).map((r) => r.id);
}

/**
 * Quiet hours at send time (docs/api.md#quiet-hours): a due scheduled text whose recipient's window
 * is closed now (its moment passed while the worker was down, or the window changed since) is not
 * sent: it moves to the window's next opening, `hold_reason` quiet_hours, with a new send-later
 * job. Runs before the claim, which then skips it (its send_at is ahead). Returns the held ids.
 */
export async function holdUntilWindowOpens(ids: number[], tx: Tx = db): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await tx.execute<{ id: number; business_id: number; conversation_id: number; send_at: string }>(sql`
    update messages m set send_at = w.opens, hold_reason = 'quiet_hours'
    from (
      select id, sending_window_next_open(quiet_hours->>'time_zone', (quiet_hours->>'start')::int, (quiet_hours->>'end')::int, now()) as opens
      from messages
      where id = any(${sql.param(ids)}::bigint[]) and status = 'scheduled' and send_at <= now() and quiet_hours is not null
    ) w
    where m.id = w.id and w.opens > now() and m.status = 'scheduled'
    returning m.id, m.business_id, m.conversation_id, m.send_at`);
  if (rows.length === 0) return [];
  await enqueue(
    tx,
    QUEUES.smsSendLater,
    rows.map((r) => ({ data: { messageId: r.id, businessId: r.business_id }, startAt: new Date(r.send_at) })),
  );
  return rows.map((r) => r.id);
}

// ─── Status updates (provider callbacks, the REST status endpoints, the sandbox) ─────────────────

export type StatusUpdate = {
  status: MessageStatus;
  errorCode?: string | null;
  errorMessage?: string | null;
  providerMetadata?: Record<string, unknown> | null;
};

type Target = { businessId: number; messageId: number } | { businessId?: number; provider?: Provider; providerMessageId: string };

/**
 * Moves one message's status forward in a single conditional UPDATE: applied only when the new
 * status ranks higher than the stored one. Returns the number of rows changed (0 or 1) and the
 * message it matched, or null when nothing matched.
 */
export async function applyStatusUpdate(
  target: Target,
  update: StatusUpdate,
  actor: EventActor,
  tx: Tx = db,
): Promise<{ updated: number; messageId: number | null }> {
  // In a transaction (a savepoint in the caller's), so the event the change writes names its actor.
  return tx.transaction(async (tx) => {
    await setEventActor(actor, tx);
    return moveStatusForward(target, update, tx);
  });
}

async function moveStatusForward(
  target: Target,
  update: StatusUpdate,
  tx: Tx,
): Promise<{ updated: number; messageId: number | null }> {
  const where =
    'messageId' in target
      ? and(eq(messages.businessId, target.businessId), eq(messages.id, target.messageId))
      : and(
          eq(messages.providerMessageId, target.providerMessageId),
          target.provider ? eq(messages.provider, target.provider) : undefined,
          target.businessId !== undefined ? eq(messages.businessId, target.businessId) : undefined,
        );
  const carriesError = isStatusIn(ERROR_STATUSES, update.status);
  const rows = await tx
    .update(messages)
    .set({
      status: update.status,
      statusUpdatedAt: sql`now()`,
      errorCode: carriesError ? (update.errorCode ?? null) : null,
      errorMessage: carriesError ? (update.errorMessage ?? null) : null,
      providerMetadata: update.providerMetadata
        ? sql`coalesce(${messages.providerMetadata}, '{}'::jsonb) || ${JSON.stringify(update.providerMetadata)}::jsonb`
        : undefined,
    })
    .where(
      and(
        where,
        sql`message_status_rank(${messages.status}, ${messages.messageType}) < message_status_rank(${update.status}, ${messages.messageType})`,
        isStatusIn(IN_FLIGHT_STATUSES, update.status) ? sql`${messages.origin} <> 'record'` : undefined,
      ),
    )
    .returning({ id: messages.id, business_id: messages.businessId, conversation_id: messages.conversationId });
  if (rows[0]) {
    return { updated: 1, messageId: rows[0].id };
  }
  const [existing] = await tx.select({ id: messages.id }).from(messages).where(where).limit(1);
  return { updated: 0, messageId: existing?.id ?? null };
}

/**
 * The batched form of applyStatusUpdate, as common table expressions for a caller's single
 * statement (the status webhook's group commit stores its events and moves the messages in one
 * round trip). `best` names a CTE with one row per message: (id, status, error_code, error_message).
 * Adds `moved` (the rows changed) and `provider_actor` (for their events; the statement must read
 * it); ends with a comma-free CTE list.
 */
export function forwardStatusCtes(best: SQL): SQL {
  // The provider reported these: the events the moves write say so (migration 0025). The caller's
  // statement must read provider_actor for it to run before the statement ends.
  return sql`provider_actor as (select set_config('app.event_actor', 'provider', true) as actor), moved as (
      update messages m set
        status = b.status,
        status_updated_at = now(),
        error_code = case when b.status = any(${sql.param([...ERROR_STATUSES])}::text[]) then b.error_code end,
        error_message = case when b.status = any(${sql.param([...ERROR_STATUSES])}::text[]) then b.error_message end
      from ${best} b
      where m.id = b.id and message_status_rank(m.status, m.message_type) < message_status_rank(b.status, m.message_type)
        and not (m.origin = 'record' and b.status in ('queued', 'sending'))
      returning m.id, m.business_id, m.conversation_id
    )`;
}

/**
 * For an upsert that meets a stored message (a CALL, written by whichever of its callbacks comes
 * first): `advanced` is true when the incoming row's status outranks the stored one, and `set` the
 * status columns of the conflict branch, which move forward only.
 */
export function statusOnConflict(messageType: 'CALL') {
  const advanced = sql`message_status_rank(excluded.status, ${messageType}) > message_status_rank(${messages.status}, ${messageType})`;
  return {
    advanced,
    set: {
      status: sql`case when ${advanced} then excluded.status else ${messages.status} end`,
      statusUpdatedAt: sql`case when ${advanced} then now() else ${messages.statusUpdatedAt} end`,
    },
  };
}
