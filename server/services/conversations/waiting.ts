import { sql, type SQL } from 'drizzle-orm';
import type { messages } from '@/db/schema';

/*
 * Waiting for a reply, defined once (docs/api.md#waiting-for-a-reply). A conversation waits for a
 * staff reply when it is open and the latest of its texts and emails the client can see is the
 * client's. Notes are not seen by the client; what the system sends (sender `system`: the opt-out
 * confirmation, HELP, the missed-call and after-hours texts, an API's reminders) answers nobody's question; calls are
 * conversations of their own (a missed one has its missed-call text). The conversation keeps the
 * answer in `waiting_since`: set by the client's first text or email after a reply, cleared by the
 * next reply, in the transaction that files the message (touchConversations). Assignment's capacity
 * and "balanced" policy, alerts, digests and reports all read it through WAITING_FOR_REPLY.
 *
 * A reply counts when it is written to go now (queued, sent, or recorded as sent by another
 * system); a message scheduled for later counts for nothing, when written or when it goes: it was
 * not written as an answer to what the client said since. A reply that later fails still counted:
 * staff see the failure on it.
 */

/** What one new message does to its conversation's waiting: `client` starts it, `reply` ends it. */
export type WaitingEffect = 'client' | 'reply' | null;

/** WAITING_EFFECT of a row about to be inserted (waiting.test.ts checks the two agree). */
export function waitingEffect(
  r: Pick<typeof messages.$inferInsert, 'direction' | 'messageType' | 'senderType' | 'status'>,
): WaitingEffect {
  if (r.messageType !== 'TEXT' && r.messageType !== 'EMAIL') return null;
  if (r.direction === 'inbound') return 'client';
  if (r.senderType === 'system' || r.status === 'scheduled' || r.status === 'canceled') return null;
  return 'reply';
}

/**
 * A `message.created` event of a reply (waitingEffect's `reply`, as the event shows it: the system
 * writes as the `system` actor). The handlers that react to replies (auto-assignment, reports)
 * drop every other outbound message on reading: a campaign's texts, reminders, automatic answers.
 */
export function isReplyEvent(e: { actor: { type: string }; data: Record<string, unknown> }): boolean {
  const d = e.data;
  return (
    d.direction === 'outbound' &&
    (d.message_type === 'TEXT' || d.message_type === 'EMAIL') &&
    e.actor.type !== 'system' &&
    d.status !== 'scheduled' &&
    d.status !== 'canceled'
  );
}

/** waitingEffect for an INSERT's RETURNING (unqualified columns of the inserted row). */
export const WAITING_EFFECT = sql.raw(`(case when message_type not in ('TEXT', 'EMAIL') then null
  when direction = 'inbound' then 'client'
  when sender_type = 'system' or status in ('scheduled', 'canceled') then null
  else 'reply' end)`);

/** The conversation (alias `c` unless given) waits for a staff reply. */
export const waitingForReply = (alias: SQL = sql.raw('c')): SQL =>
  sql`(${alias}.status = 'open' and ${alias}.waiting_since is not null)`;

/**
 * A stored message (alias `m`) that started or ended a conversation's waiting when it was written:
 * the client's text or email, or a reply (WAITING_EFFECT, read from what stays of the row: a message
 * written for later keeps its send_at after it goes, so `send_at is null` is "written to go now").
 * The collision guard (docs/api.md#collision-guard) holds a send for these, and for nothing else.
 */
export const movedWaiting = (alias: SQL = sql.raw('m')): SQL =>
  sql`(${alias}.message_type in ('TEXT', 'EMAIL') and (${alias}.direction = 'inbound'
    or (${alias}.sender_type <> 'system' and ${alias}.send_at is null and ${alias}.status <> 'canceled')))`;
