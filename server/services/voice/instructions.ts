import { and, asc, eq, isNull, ne, or, sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { businesses, clients, conversations, staff, type BusinessSettings, type MessageStatus } from '@/db/schema';
import { normalizePhone } from '@/server/lib/phone';
import { logger } from '@/server/logger';
import { countParam, param, type FormParams } from '@/server/providers/twilio-signature';
import { DEFAULT_RECORDING_NOTICE, type InstructionStep } from '@/server/schemas/voice';
import { ensureConversations } from '@/server/services/conversations/activity';
import {
  activeStaffMember,
  activeStaffOf,
  businessForNumber,
  defaultSmsNumber,
  findOrCreateClientByPhone,
} from '@/server/services/directory';
import { callStatusOf, findCall, recordCall, type CallOutcome, type RecordedCall } from './call-record';
import { ensureMissedCallText } from './missed-call-text';
import { staffIdOfIdentity } from './token';
import { calleeNotice, dialNumber, dialStaff, endCall, MAX_RING_GROUP, rejectCall, sayAndHangUp, voicemail } from './twiml';

/**
 * POST /voice-calls/instructions (docs/providers.md#twiml-and-ringing): what Twilio does next with a call. A call's
 * first request has no step; every <Dial>/<Record> we return names, in its action URL, the step
 * that just ended, so one call is a chain of requests:
 *
 *   browser → phone:  (first) Dial the number → outbound (record the result, end)
 *                     (recorded: the callee's leg asks for `notice` once answered, and hears it)
 *   phone → business: (first) ring the assigned staff member → assigned → ring the team → team
 *                     → voicemail (greeting + Record) → voicemail (end)
 *
 * A business that records calls (`settings.record_calls`) has its recording notice said before
 * anyone is connected (docs/providers.md#recording-notice): to the caller, before the first <Dial>
 * of either direction, and to the callee of a browser call, once they answer.
 *
 * Every request writes the call's one CALL message (recordCall: idempotent, any order with the
 * status callbacks), so a retried request or a late callback changes nothing twice.
 */
export async function callInstructions(params: FormParams, step: InstructionStep | undefined, tx: Tx = db): Promise<string> {
  if (step === 'outbound') return afterOutboundDial(params, tx);
  if (step === 'notice') return noticeToCallee(params, tx);
  if (step) return inboundStep(params, step, tx);
  return (param(params, 'From') ?? '').startsWith('client:') ? placeCall(params, tx) : inboundStep(params, undefined, tx);
}

type Business = { id: number; name: string; country: string; settings: BusinessSettings };
type InboundStep = Exclude<InstructionStep, 'outbound' | 'notice'>;

/** The business's recording notice (blank or unset: the default). */
const noticeText = (settings: BusinessSettings) => settings.recording_notice?.trim() || DEFAULT_RECORDING_NOTICE;
/** What is said before a call is connected: the notice when the business records calls, else nothing. */
const recordingNotice = (settings: BusinessSettings) => (settings.record_calls === true ? noticeText(settings) : null);

async function loadBusiness(businessId: number, tx: Tx): Promise<Business> {
  const [row] = await tx
    .select({ id: businesses.id, name: businesses.name, country: businesses.country, settings: businesses.settings })
    .from(businesses)
    .where(eq(businesses.id, businessId))
    .limit(1);
  return row!;
}

// ---- browser → phone ------------------------------------------------------------------------

/** A call from the dialer: `To` (a phone number) and/or `ClientId` (a client of the staff member's business). */
async function placeCall(params: FormParams, tx: Tx = db): Promise<string> {
  const staffId = staffIdOfIdentity(param(params, 'From'));
  const member = staffId ? await activeStaffMember(staffId, tx) : null;
  if (!member) return rejectCall();
  const business = await loadBusiness(member.businessId, tx);
  const callerId = await defaultSmsNumber(business.id, tx);
  if (!callerId) return sayAndHangUp('This business has no phone number to call from.');
  const target = await callTarget(business, params, tx);
  if (typeof target === 'string') return sayAndHangUp(target);

  await tx.transaction(async (tx) => {
    const clientId = target.clientId ?? (await findOrCreateClientByPhone(business.id, target.number, tx));
    const conversationId = (await ensureConversations(business.id, [clientId], tx)).get(clientId)!;
    await recordCall(
      {
        businessId: business.id,
        clientId,
        conversationId,
        callSid: param(params, 'CallSid') ?? '',
        direction: 'outbound',
        staffId: member.id,
        from: param(params, 'From') ?? '',
        to: target.number,
        status: callStatusOf(param(params, 'CallStatus')) ?? 'initiated',
      },
      tx,
    );
  });
  return dialNumber({ callerId, number: target.number, recordingNotice: recordingNotice(business.settings) });
}

/** Whom the dialer asked for: the client named by ClientId (at `To` if given, else their phone), or whoever has `To`. */
async function callTarget(
  business: Business,
  params: FormParams,
  tx: Tx = db,
): Promise<{ clientId: number | null; number: string } | string> {
  const clientIdParam = param(params, 'ClientId');
  const toParam = param(params, 'To');
  let client: { id: number; phoneNumber: string | null } | undefined;
  if (clientIdParam) {
    [client] = /^\d{1,9}$/.test(clientIdParam)
      ? await tx
          .select({ id: clients.id, phoneNumber: clients.phoneNumber })
          .from(clients)
          .where(and(eq(clients.id, Number(clientIdParam)), eq(clients.businessId, business.id)))
          .limit(1)
      : [];
    if (!client) return 'That client was not found.';
  }
  const number = toParam ? normalizePhone(toParam, business.country) : (client?.phoneNumber ?? null);
  if (!number) return toParam ? 'That number cannot be dialled.' : 'There is no number to call.';
  return { clientId: client?.id ?? null, number };
}

/** The browser call's <Dial> ended: its DialCallStatus is the call's result (the client answered or not). */
async function afterOutboundDial(params: FormParams, tx: Tx = db): Promise<string> {
  const callSid = param(params, 'CallSid') ?? '';
  await tx.transaction(async (tx) => {
    const known = await findCall(callSid, tx);
    if (!known) return logger.warn({ call_sid: callSid }, 'dial result of a call that was never recorded');
    await recordCall(
      {
        ...known,
        status: callStatusOf(param(params, 'DialCallStatus')) ?? 'completed',
        durationSeconds: countParam(params, 'DialCallDuration'),
      },
      tx,
    );
  });
  return endCall();
}

/**
 * The callee of a recorded browser call answered (its <Number>'s `url`): they hear the notice, then
 * are connected. The leg's `From` is the caller id we dialled from, the business's number; should
 * that number have no business any more, the default notice is said: the call is recorded anyway.
 */
async function noticeToCallee(params: FormParams, tx: Tx = db): Promise<string> {
  const from = param(params, 'From') ?? '';
  const owner = await businessForNumber(normalizePhone(from) ?? from, tx);
  return calleeNotice(owner ? noticeText((await loadBusiness(owner.businessId, tx)).settings) : DEFAULT_RECORDING_NOTICE);
}

// ---- phone → business -----------------------------------------------------------------------

type Inbound = {
  business: Business;
  client: {
    id: number;
    name: string | null;
    locationId: number | null;
    conversationId: number;
    assignedStaffId: number | null;
  } | null;
};

type Next = { kind: 'ring'; staffIds: number[]; step: 'assigned' | 'team' } | { kind: 'voicemail' } | { kind: 'end' };

const CALLER_GONE = new Set(['completed', 'canceled', 'busy', 'no-answer', 'failed']);

/**
 * One request of an inbound call: decides the next step, writes the call in the same transaction
 * (the client, a lead when the number is new, and its conversation are found or created first).
 */
async function inboundStep(params: FormParams, step: InboundStep | undefined, tx: Tx = db): Promise<string> {
  const to = param(params, 'To') ?? '';
  const owner = await businessForNumber(normalizePhone(to) ?? to, tx);
  if (!owner) {
    logger.warn({ to, call_sid: param(params, 'CallSid') }, 'call to a number no business owns');
    return endCall();
  }
  const { inbound, next, call } = await tx.transaction(async (tx) => {
    const inbound = await resolveInbound(owner.businessId, params, tx);
    const { next, status, outcome, durationSeconds } = await decide(inbound, params, step, tx);
    const call = inbound.client
      ? await recordCall(
          {
            businessId: inbound.business.id,
            clientId: inbound.client.id,
            conversationId: inbound.client.conversationId,
            callSid: param(params, 'CallSid') ?? '',
            direction: 'inbound',
            staffId: null,
            from: param(params, 'From') ?? '',
            to,
            status,
            outcome,
            durationSeconds,
          },
          tx,
        )
      : null;
    return { inbound, next, call };
  });
  if (call?.callOutcome) await textCaller(call, tx);

  const record = inbound.business.settings.record_calls === true;
  // The caller hears the notice once, before the first ring; later rings are the same recorded call.
  const notice = step === undefined ? recordingNotice(inbound.business.settings) : null;
  const client = inbound.client && {
    id: inbound.client.id,
    name: inbound.client.name,
    conversationId: inbound.client.conversationId,
  };
  if (next.kind === 'ring') return dialStaff({ staffIds: next.staffIds, next: next.step, record, notice, client });
  if (next.kind === 'voicemail') return voicemail(inbound.business.name);
  return endCall();
}

type Decision = { next: Next; status: MessageStatus; outcome?: CallOutcome; durationSeconds?: number | null };

/** What this request means for the call, and what Twilio does next. */
async function decide(inbound: Inbound, params: FormParams, step: InboundStep | undefined, tx: Tx): Promise<Decision> {
  if (step === undefined)
    return ringing(await ringPlan(inbound, 'start', tx), callStatusOf(param(params, 'CallStatus')) ?? 'ringing');
  if (step === 'voicemail') return { next: { kind: 'end' }, status: 'completed' };
  const dialStatus = param(params, 'DialCallStatus');
  if (dialStatus === 'completed' || dialStatus === 'answered') {
    return { next: { kind: 'end' }, status: 'completed', durationSeconds: countParam(params, 'DialCallDuration') };
  }
  // The caller hung up while it rang: a missed call, nothing left to ring.
  const callStatus = param(params, 'CallStatus') ?? '';
  if (CALLER_GONE.has(callStatus)) return { next: { kind: 'end' }, status: callStatusOf(callStatus)!, outcome: 'missed' };
  return ringing(step === 'assigned' ? await ringPlan(inbound, 'team', tx) : { kind: 'voicemail' }, 'ringing');
}

/** Going to voicemail means nobody answered: the call is missed from here on (a recording makes it a voicemail). */
const ringing = (next: Next, status: MessageStatus): Decision =>
  next.kind === 'voicemail' ? { next, status, outcome: 'missed' } : { next, status };

async function resolveInbound(businessId: number, params: FormParams, tx: Tx): Promise<Inbound> {
  const business = await loadBusiness(businessId, tx);
  const caller = normalizePhone(param(params, 'From') ?? '', business.country);
  // A withheld or unparsable caller id has no client to file the call under; staff are still rung.
  if (!caller) return { business, client: null };
  const clientId = await findOrCreateClientByPhone(businessId, caller, tx);
  const conversationId = (await ensureConversations(businessId, [clientId], tx)).get(clientId)!;
  const [client] = await tx
    .select({
      id: clients.id,
      name: clients.name,
      locationId: clients.locationId,
      assignedStaffId: conversations.assignedStaffId,
    })
    .from(clients)
    .innerJoin(conversations, eq(conversations.id, conversationId))
    .where(and(eq(clients.id, clientId), eq(clients.businessId, businessId)))
    .limit(1);
  return { business, client: { ...client!, conversationId } };
}

/**
 * Who rings next (docs/providers.md#twiml-and-ringing): the conversation's assigned staff member first, when active;
 * then the team, everyone active but them: the active staff of the client's location together with
 * those tied to no location (they cover every site); when the client has no location, or that finds
 * nobody, every active staff member of the business. Twilio rings at most 10 at once. Nobody left:
 * voicemail.
 */
async function ringPlan(inbound: Inbound, from: 'start' | 'team', tx: Tx): Promise<Next> {
  const businessId = inbound.business.id;
  const assignedId = inbound.client?.assignedStaffId ?? null;
  if (from === 'start' && assignedId !== null) {
    const [assigned] = await tx
      .select({ id: staff.id })
      .from(staff)
      .where(and(eq(staff.id, assignedId), activeStaffOf(businessId)))
      .limit(1);
    if (assigned) return { kind: 'ring', staffIds: [assigned.id], step: 'assigned' };
  }
  const active = and(activeStaffOf(businessId), assignedId !== null ? ne(staff.id, assignedId) : undefined);
  const activeIds = (where: typeof active) =>
    tx
      .select({ id: staff.id })
      .from(staff)
      .where(where)
      .orderBy(sql`${staff.locationId} is null`, asc(staff.id))
      .limit(MAX_RING_GROUP);
  const locationId = inbound.client?.locationId ?? null;
  let team =
    locationId !== null ? await activeIds(and(active, or(eq(staff.locationId, locationId), isNull(staff.locationId)))) : [];
  if (team.length === 0) team = await activeIds(active);
  return team.length ? { kind: 'ring', staffIds: team.map((s) => s.id), step: 'team' } : { kind: 'voicemail' };
}

/** The missed-call text must never cost the caller the call: a failure is logged, and the next write of the call tries again. */
async function textCaller(call: RecordedCall, tx: Tx = db): Promise<void> {
  await ensureMissedCallText(call, tx).catch((err: unknown) =>
    logger.error({ err, call_sid: call.callSid }, 'missed-call text failed'),
  );
}
