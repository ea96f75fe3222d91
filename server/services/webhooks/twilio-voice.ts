import { eq, sql } from 'drizzle-orm';
import { db } from '@/db/client';
import { messages, staff, type MessageStatus } from '@/db/schema';
import { normalizePhone } from '@/server/lib/phone';
import { param, type FormParams } from '@/server/providers/twilio-signature';
import { publish } from '@/server/realtime/publish';
import { ensureConversations, touchConversations } from '@/server/services/messages/submit';
import { markEvent } from './events';
import { businessForNumber, findOrCreateClientByPhone } from './twilio-inbound';

/** providers.md §4.3: Twilio CallStatus → ours. */
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
const MISSED: MessageStatus[] = ['busy', 'no_answer', 'canceled', 'failed'];

/**
 * A voice status callback: exactly one CALL message per CallSid in the client's conversation,
 * created by the first callback that arrives and moved forward (never back) by the others; the
 * duration and recording URL are kept whenever a callback carries them. An inbound call that
 * ends unanswered is marked `missed`.
 */
export async function processVoiceStatus(eventId: number, params: FormParams): Promise<void> {
  const callSid = param(params, 'CallSid') ?? '';
  const status = CALL_STATUS[(param(params, 'CallStatus') ?? '').toLowerCase()];
  const from = param(params, 'From') ?? '';
  const to = param(params, 'To') ?? '';
  const inbound = (param(params, 'Direction') ?? 'inbound') === 'inbound' && !from.startsWith('client:');
  const duration = param(params, 'CallDuration') ?? param(params, 'DialCallDuration');
  const recordingUrl = param(params, 'RecordingUrl') ?? null;
  if (!status) return markEvent(eventId, 'ignored', { error: `Unknown CallStatus ${param(params, 'CallStatus')}` });

  await db.transaction(async (tx) => {
    // The business: its number on the business side of the call, or the staff member placing it.
    const staffIdentity = (inbound ? to : from).match(/^client:staff-(\d+)$/)?.[1];
    let businessId: number | null = null;
    let country = 'US';
    let staffId: number | null = null;
    if (staffIdentity) {
      const [member] = await tx.select({ id: staff.id, businessId: staff.businessId }).from(staff).where(eq(staff.id, Number(staffIdentity))).limit(1);
      if (member) ({ businessId, id: staffId } = { businessId: member.businessId, id: member.id });
    } else {
      const owner = await businessForNumber(normalizePhone(inbound ? to : from) ?? (inbound ? to : from), tx);
      if (owner) ({ businessId, country } = owner);
    }
    if (!businessId) return markEvent(eventId, 'ignored', { error: `No business for call ${callSid}` }, tx);
    const clientPhone = normalizePhone(inbound ? from : to, country);
    if (!clientPhone) return markEvent(eventId, 'ignored', { error: `No client number on call ${callSid}`, businessId }, tx);
    const clientId = await findOrCreateClientByPhone(tx, businessId, clientPhone);
    const conversationId = (await ensureConversations(tx, businessId, [clientId])).get(clientId)!;

    const [row] = await tx
      .insert(messages)
      .values({
        businessId,
        conversationId,
        clientId,
        channel: 'voice',
        direction: inbound ? 'inbound' : 'outbound',
        messageType: 'CALL',
        senderType: inbound ? 'client' : 'staff',
        senderId: inbound ? clientId : staffId,
        receiverType: inbound ? 'staff' : 'client',
        receiverId: inbound ? null : clientId,
        staffId,
        fromAddress: from,
        toAddress: to,
        status,
        provider: 'twilio',
        providerMessageId: callSid,
        callDurationSeconds: duration ? Number(duration) : null,
        recordingUrl,
        callOutcome: inbound && MISSED.includes(status) ? 'missed' : null,
        isRead: !inbound,
      })
      .onConflictDoUpdate({
        target: [messages.provider, messages.providerMessageId],
        set: {
          status: sql`case when message_status_rank(excluded.status, 'CALL') > message_status_rank(${messages.status}, 'CALL') then excluded.status else ${messages.status} end`,
          statusUpdatedAt: sql`now()`,
          callDurationSeconds: sql`coalesce(excluded.call_duration_seconds, ${messages.callDurationSeconds})`,
          recordingUrl: sql`coalesce(excluded.recording_url, ${messages.recordingUrl})`,
          callOutcome: sql`case when message_status_rank(excluded.status, 'CALL') > message_status_rank(${messages.status}, 'CALL') then coalesce(excluded.call_outcome, ${messages.callOutcome}) else ${messages.callOutcome} end`,
        },
      })
      .returning({ id: messages.id, created: sql<boolean>`(xmax = 0)` });
    if (row!.created) await touchConversations(tx, [row!.id]);
    await publish(tx, { type: row!.created ? 'message.created' : 'message.status', businessId, conversationIds: [conversationId], messageIds: [row!.id] });
    await markEvent(eventId, 'processed', { businessId }, tx);
  });
}
