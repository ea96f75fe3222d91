import { and, eq } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { businesses, staff, type MessageStatus } from '@/db/schema';
import { normalizePhone } from '@/server/lib/phone';
import { countParam, param, type FormParams } from '@/server/providers/twilio-signature';
import { ensureConversations } from '@/server/services/conversations/activity';
import { businessForNumber, findOrCreateClientByPhone } from '@/server/services/directory';
import { callStatusOf, findCall, recordCall, UNANSWERED, type CallFacts } from '@/server/services/voice/call-record';
import { ensureMissedCallText } from '@/server/services/voice/missed-call-text';
import { processRecording } from '@/server/services/voice/recording';
import { staffIdOfIdentity } from '@/server/services/voice/token';
import { markEvent, processOrRetry, storeEvent } from './events';

/**
 * A voice status callback: moves the call's one CALL message forward (server/services/voice/
 * call-record.ts), creating it when the callback beats the instructions request. A child leg (the
 * <Number> or <Client> our TwiML dialled, with ParentCallSid) belongs to its parent's message.
 */
export async function processVoiceStatus(eventId: number, params: FormParams, tx: Tx = db): Promise<void> {
  const status = callStatusOf(param(params, 'CallStatus'));
  if (!status) return markEvent(eventId, 'ignored', { error: `Unknown CallStatus ${param(params, 'CallStatus')}` }, tx);

  const call = await tx.transaction(async (tx) => {
    const facts = await callOfCallback(params, status, tx);
    if (typeof facts === 'string') {
      await markEvent(eventId, 'ignored', { error: facts }, tx);
      return null;
    }
    const recorded = await recordCall(facts, tx);
    await markEvent(eventId, 'processed', { businessId: recorded.businessId }, tx);
    return recorded;
  });
  if (call) await ensureMissedCallText(call, tx);
}

/** The call a callback is about and what it says, or why it cannot be placed. */
async function callOfCallback(params: FormParams, status: MessageStatus, tx: Tx): Promise<CallFacts | string> {
  const parentSid = param(params, 'ParentCallSid');
  const callSid = parentSid ?? param(params, 'CallSid') ?? '';
  const known = await findCall(callSid, tx);
  const parties = known ?? (await partiesOf(params, callSid, tx));
  if (typeof parties === 'string') return parties;

  const duration = countParam(params, 'CallDuration') ?? countParam(params, 'DialCallDuration');
  const facts: CallFacts = {
    businessId: parties.businessId,
    clientId: parties.clientId,
    conversationId: parties.conversationId,
    callSid,
    direction: parties.direction,
    staffId: parties.staffId,
    from: parties.from,
    to: parties.to,
    status,
    durationSeconds: duration,
    recordingUrl: param(params, 'RecordingUrl') ?? null,
  };
  if (parties.direction === 'outbound' || parentSid === undefined) return facts;
  // A ring leg of an inbound call: one left unanswered is not the call's end (the next group or
  // the voicemail follows); one answered tells who took the call.
  if (UNANSWERED.includes(status)) return { ...facts, status: 'ringing' };
  const callee = staffIdOfIdentity(param(params, 'To'));
  const answeredBy =
    callee !== null && (status === 'in_progress' || status === 'completed')
      ? await tx
          .select({ id: staff.id })
          .from(staff)
          .where(and(eq(staff.id, callee), eq(staff.businessId, parties.businessId)))
          .limit(1)
      : [];
  return { ...facts, staffId: facts.staffId ?? answeredBy[0]?.id ?? null };
}

/**
 * Business, client and direction from the callback alone: a `client:staff-N` caller placed an
 * outbound call; a `client:staff-N` callee is a ring leg of an inbound call; otherwise the business
 * number is `To` of an inbound call or `From` of a leg we dialled. An unknown caller becomes a lead.
 */
async function partiesOf(params: FormParams, callSid: string, tx: Tx) {
  const from = param(params, 'From') ?? '';
  const to = param(params, 'To') ?? '';
  const callerStaff = staffIdOfIdentity(from);
  const calleeStaff = staffIdOfIdentity(to);
  const inbound = callerStaff === null && (calleeStaff !== null || (param(params, 'Direction') ?? 'inbound') === 'inbound');

  let businessId: number | null = null;
  let country = 'US';
  const memberId = callerStaff ?? calleeStaff;
  if (memberId !== null) {
    const [member] = await tx
      .select({ businessId: staff.businessId, country: businesses.country })
      .from(staff)
      .innerJoin(businesses, eq(businesses.id, staff.businessId))
      .where(eq(staff.id, memberId))
      .limit(1);
    if (member) ({ businessId, country } = member);
  } else {
    const number = inbound ? to : from;
    const owner = await businessForNumber(normalizePhone(number) ?? number, tx);
    if (owner) ({ businessId, country } = owner);
  }
  if (!businessId) return `No business for call ${callSid}`;
  const clientPhone = normalizePhone(inbound ? from : to, country);
  if (!clientPhone) return `No client number on call ${callSid}`;
  const clientId = await findOrCreateClientByPhone(businessId, clientPhone, tx);
  const conversationId = (await ensureConversations(businessId, [clientId], tx)).get(clientId)!;
  // The caller of an outbound call is known here; who answers an inbound one only when a leg is answered.
  const staffId = inbound ? null : callerStaff;
  return {
    businessId,
    clientId,
    conversationId,
    staffId,
    from,
    to,
    direction: inbound ? ('inbound' as const) : ('outbound' as const),
  };
}

/**
 * A call status webhook (verified): stored raw, deduplicated by (CallSid, CallStatus,
 * SequenceNumber, RecordingSid), then processed (a failure is retried by a job). A redelivery, or
 * a form without a CallSid, does nothing. `rawBody`: the exact request bytes, when the params had
 * to be cleaned to be storable.
 */
export async function receiveVoiceStatus(
  params: FormParams,
  headers: Record<string, string>,
  rawBody: Buffer | null,
  tx: Tx = db,
): Promise<void> {
  const callSid = param(params, 'CallSid');
  if (!callSid) return;
  const dedupeKey = [callSid, param(params, 'CallStatus'), param(params, 'SequenceNumber'), param(params, 'RecordingSid')].join(
    ':',
  );
  const eventId = await storeEvent(
    { provider: 'twilio', kind: 'voice_status', dedupeKey, headers, payload: params, rawBody },
    tx,
  );
  if (eventId !== null) await processOrRetry(eventId, 'voice_status', () => processVoiceStatus(eventId, params, tx), tx);
}

/**
 * A recording status webhook (verified): stored raw, deduplicated by (RecordingSid,
 * RecordingStatus), then processed (server/services/voice/recording.ts; a failure is retried by a
 * job). A redelivery, or a form without a RecordingSid, does nothing.
 */
export async function receiveRecordingStatus(
  params: FormParams,
  headers: Record<string, string>,
  rawBody: Buffer | null,
  tx: Tx = db,
): Promise<void> {
  const recordingSid = param(params, 'RecordingSid');
  if (!recordingSid) return;
  const dedupeKey = `${recordingSid}:${param(params, 'RecordingStatus') ?? ''}`;
  const eventId = await storeEvent(
    { provider: 'twilio', kind: 'voice_recording', dedupeKey, headers, payload: params, rawBody },
    tx,
  );
  if (eventId !== null)
    await processOrRetry(eventId, 'voice_recording', () => processRecording(eventId, params, undefined, tx), tx);
}
