import { and, eq, sql } from 'drizzle-orm';
import type { Tx } from '@/server/db/client';
import { messages, type MessageStatus } from '@/db/schema';
import { statusOnConflict } from '@/server/services/messages/lifecycle';
import { touchConversations } from '@/server/services/conversations/activity';
import { COUNTS_AS_UNREAD } from '@/server/services/messages/insert';

export type CallOutcome = 'missed' | 'voicemail';

/** docs/providers.md#call-statuses: Twilio CallStatus (and a <Dial>'s DialCallStatus) → ours. */
const CALL_STATUS: Record<string, MessageStatus> = {
  queued: 'initiated',
  initiated: 'initiated',
  ringing: 'ringing',
  'in-progress': 'in_progress',
  answered: 'in_progress',
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'no_answer',
  canceled: 'canceled',
  failed: 'failed',
};
export const callStatusOf = (twilioStatus: string | undefined): MessageStatus | undefined =>
  CALL_STATUS[(twilioStatus ?? '').toLowerCase()];

/** Terminal statuses of a call nobody answered. */
export const UNANSWERED: MessageStatus[] = ['busy', 'no_answer', 'canceled', 'failed'];

export type CallFacts = {
  businessId: number;
  clientId: number;
  conversationId: number;
  /** The call the message is keyed by: the caller's leg (the browser's, or the inbound caller's). */
  callSid: string;
  direction: 'inbound' | 'outbound';
  /** Who placed it (outbound) or answered it (inbound), when this write knows. */
  staffId: number | null;
  from: string;
  to: string;
  status: MessageStatus;
  durationSeconds?: number | null;
  recordingUrl?: string | null;
  /** Decided by the call flow itself (voicemail step, voicemail recording), whatever the callback order. */
  outcome?: CallOutcome | null;
};

export type RecordedCall = {
  id: number;
  created: boolean;
  businessId: number;
  clientId: number;
  conversationId: number;
  callSid: string;
  direction: 'inbound' | 'outbound';
  callOutcome: CallOutcome | null;
  sentAt: Date;
};

/**
 * The one writer of CALL messages (docs/providers.md#call-statuses): exactly one per CallSid, created by whichever
 * of the instructions request and the status/recording callbacks comes first and merged by the
 * rest, in one statement (unique (provider, provider_message_id)), so duplicates and any order end
 * the same:
 * - the status only moves forward (message_status_rank);
 * - a duration or recording URL is kept whenever a write carries one;
 * - the staff member is the first one known;
 * - the outcome only rises, none < missed < voicemail. A missed derived from a status (an inbound
 *   call ending busy/no-answer/canceled/failed) counts only when that status moved the call
 *   forward, so a late `busy` cannot turn an answered call into a missed one.
 */
export async function recordCall(call: CallFacts, tx: Tx): Promise<RecordedCall> {
  const inbound = call.direction === 'inbound';
  const explicit = call.outcome ?? null;
  const { advanced, set: statusSet } = statusOnConflict('CALL');
  const [row] = await tx
    .insert(messages)
    .values({
      businessId: call.businessId,
      conversationId: call.conversationId,
      clientId: call.clientId,
      channel: 'voice',
      direction: call.direction,
      messageType: 'CALL',
      senderType: inbound ? 'client' : 'staff',
      senderId: inbound ? call.clientId : call.staffId,
      receiverType: inbound ? 'staff' : 'client',
      receiverId: inbound ? call.staffId : call.clientId,
      staffId: call.staffId,
      fromAddress: call.from,
      toAddress: call.to,
      status: call.status,
      origin: 'webhook',
      provider: 'twilio',
      providerMessageId: call.callSid,
      callDurationSeconds: call.durationSeconds ?? null,
      recordingUrl: call.recordingUrl ?? null,
      callOutcome: explicit ?? (inbound && UNANSWERED.includes(call.status) ? 'missed' : null),
      isRead: !inbound,
    })
    .onConflictDoUpdate({
      target: [messages.provider, messages.providerMessageId, messages.businessId],
      // messages_provider_id_key is partial (ids only): the conflict target says so.
      targetWhere: sql`${messages.providerMessageId} is not null`,
      set: {
        ...statusSet,
        staffId: sql`coalesce(${messages.staffId}, excluded.staff_id)`,
        senderId: sql`coalesce(${messages.senderId}, excluded.sender_id)`,
        receiverId: sql`coalesce(${messages.receiverId}, excluded.receiver_id)`,
        callDurationSeconds: sql`coalesce(excluded.call_duration_seconds, ${messages.callDurationSeconds})`,
        recordingUrl: sql`coalesce(excluded.recording_url, ${messages.recordingUrl})`,
        callOutcome: sql`case
          when ${messages.callOutcome} = 'voicemail' or ${explicit}::text = 'voicemail' then 'voicemail'
          when ${messages.callOutcome} = 'missed' or ${explicit}::text = 'missed' then 'missed'
          when ${advanced} then excluded.call_outcome
          else ${messages.callOutcome} end`,
      },
    })
    .returning({
      id: messages.id,
      created: sql<boolean>`(xmax = 0)`,
      callOutcome: messages.callOutcome,
      direction: messages.direction,
      sentAt: messages.sentAt,
      // A row merged into keeps its own parties (a child leg's callback may have created it).
      businessId: messages.businessId,
      clientId: messages.clientId,
      conversationId: messages.conversationId,
      unread: sql<boolean>`${COUNTS_AS_UNREAD}`,
    });
  const saved = row!;
  // The inbox hears of it from the call's events (migrations 0027, 0030: started, completed, voicemail).
  if (saved.created) await touchConversations([saved], tx);
  return {
    ...saved,
    callSid: call.callSid,
    direction: saved.direction as 'inbound' | 'outbound',
    callOutcome: saved.callOutcome as CallOutcome | null,
  };
}

type KnownCall = Pick<
  CallFacts,
  'businessId' | 'clientId' | 'conversationId' | 'callSid' | 'direction' | 'staffId' | 'from' | 'to'
> & {
  callOutcome: CallOutcome | null;
};

/** The parties of a CallSid's CALL message, if a call step or callback has created it yet. */
export async function findCall(callSid: string, tx: Tx): Promise<KnownCall | null> {
  const [row] = await tx
    .select({
      businessId: messages.businessId,
      clientId: messages.clientId,
      conversationId: messages.conversationId,
      direction: messages.direction,
      staffId: messages.staffId,
      from: messages.fromAddress,
      to: messages.toAddress,
      callOutcome: messages.callOutcome,
    })
    .from(messages)
    .where(and(eq(messages.provider, 'twilio'), eq(messages.providerMessageId, callSid), eq(messages.messageType, 'CALL')))
    .limit(1);
  return row
    ? { ...row, callSid, from: row.from ?? '', to: row.to ?? '', callOutcome: row.callOutcome as CallOutcome | null }
    : null;
}
