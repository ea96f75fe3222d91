import { db, type Tx } from '@/server/db/client';
import { param, type FormParams } from '@/server/providers/twilio-signature';
import { markEvent } from '@/server/services/webhooks/events';
import { findCall, recordCall } from './call-record';
import { ensureMissedCallText } from './missed-call-text';

/**
 * A recording status callback (docs/providers.md#recordings; stored as event `eventId`): a `completed`
 * recording's URL goes on its call's CALL message. A recording of an inbound call nobody answered
 * can only be the voicemail's <Record> (a call is recorded by <Dial> only once answered, and is
 * marked missed before the voicemail starts), so it makes the call a `voicemail`. `absent` (nothing
 * said) and `failed` recordings change nothing. A CallSid with no message yet is retried by the
 * webhook retry job (`lastAttempt` closes it as ignored).
 */
export async function processRecording(eventId: number, params: FormParams, lastAttempt = false, tx: Tx = db): Promise<void> {
  const callSid = param(params, 'CallSid') ?? '';
  const status = param(params, 'RecordingStatus') ?? 'completed';
  const url = param(params, 'RecordingUrl');
  if (status !== 'completed' || !url)
    return markEvent(eventId, 'ignored', { error: `Recording ${status}${url ? '' : ', no RecordingUrl'}` }, tx);

  const call = await tx.transaction(async (tx) => {
    const known = await findCall(callSid, tx);
    if (!known) {
      if (!lastAttempt) throw new Error(`No call has CallSid ${callSid} yet`);
      await markEvent(eventId, 'ignored', { error: `No call has CallSid ${callSid}` }, tx);
      return null;
    }
    const voicemail = known.direction === 'inbound' && known.callOutcome !== null;
    // `initiated` ranks lowest: the recording never moves the call's status.
    const recorded = await recordCall(
      {
        ...known,
        status: 'initiated',
        recordingUrl: url,
        outcome: voicemail ? 'voicemail' : null,
      },
      tx,
    );
    await markEvent(eventId, 'processed', { businessId: known.businessId }, tx);
    return recorded;
  });
  if (call) await ensureMissedCallText(call, tx);
}
