import { sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { param, type FormParams } from '@/server/providers/twilio-signature';
import { mapTwilioMessageStatus } from '@/server/providers/twilio-status';
import { twilioErrorMessage } from '@/server/shared/provider-errors';
import { applyStatusUpdate } from '@/server/services/messages/lifecycle';
import { processRecording } from '@/server/services/voice/recording';
import { claimEvent, markEvent, releaseEvent } from './events';
import { processInboundEmail, type InboundEmail } from './email-inbound';
import { applySendgridEvent, type SendgridEvent } from './sendgrid-events';
import { processInboundSms } from './twilio-inbound';
import { processVoiceStatus } from './twilio-voice';

/**
 * The `webhook.retry` job and the worker's sweep: processes a stored event again, the same way the
 * endpoint would have, after claiming it (so two processors never run one event at once). Throwing
 * makes pg-boss retry with backoff; on the last attempt an event that still cannot be applied is
 * closed as `ignored` with the reason, so it stays visible.
 */
export async function reprocessEvent(eventId: number, lastAttempt: boolean, tx: Tx = db): Promise<void> {
  const event = await claimEvent(eventId, tx);
  if (!event) return; // processed, ignored, or being processed by someone else
  try {
    await processEvent(event, lastAttempt, tx);
  } catch (err) {
    await releaseEvent(eventId, err, tx).catch(() => {});
    throw err;
  }
}

async function processEvent(
  event: NonNullable<Awaited<ReturnType<typeof claimEvent>>>,
  lastAttempt: boolean,
  tx: Tx = db,
): Promise<void> {
  const eventId = event.id;
  const params = event.payload as FormParams;
  switch (event.kind) {
    case 'sms_incoming':
      return processInboundSms(eventId, params, tx);
    case 'sms_status': {
      const sid = param(params, 'MessageSid') ?? param(params, 'SmsSid') ?? '';
      const status = mapTwilioMessageStatus(param(params, 'MessageStatus') ?? param(params, 'SmsStatus') ?? '');
      const errorCode = param(params, 'ErrorCode') ?? null;
      const [target] = await tx.execute<{ id: number; business_id: number }>(
        sql`select id, business_id from messages where provider_message_id = ${sid} and provider in ('twilio', 'sandbox')
              and business_id = (select business_id from business_sms_numbers where phone_number = ${param(params, 'From') ?? ''}) limit 1`,
      );
      if (!target) {
        const [earlier] = await tx.execute<{ id: number; business_id: number }>(
          sql`select id, business_id from messages where previous_provider_message_ids @> array[${sid}]::text[]
              and business_id = (select business_id from business_sms_numbers where phone_number = ${param(params, 'From') ?? ''}) limit 1`,
        );
        if (earlier)
          return markEvent(
            eventId,
            'ignored',
            {
              error: `MessageSid ${sid} is an earlier attempt of message ${earlier.id}`,
              businessId: earlier.business_id,
            },
            tx,
          );
        if (lastAttempt) return markEvent(eventId, 'ignored', { error: `No message has MessageSid ${sid}` }, tx);
        throw new Error(`No message has MessageSid ${sid} yet`);
      }
      const result = status
        ? await applyStatusUpdate(
            { businessId: target.business_id, messageId: target.id },
            { status, errorCode, errorMessage: errorCode ? twilioErrorMessage(errorCode) : null },
            { type: 'provider' },
            tx,
          )
        : { updated: 0 };
      return markEvent(eventId, result.updated ? 'processed' : 'ignored', { businessId: target.business_id }, tx);
    }
    case 'sendgrid_event':
      return applySendgridEvent(eventId, event.payload as SendgridEvent, tx);
    case 'voice_status':
      return processVoiceStatus(eventId, params, tx);
    case 'voice_recording':
      return processRecording(eventId, params, lastAttempt, tx);
    case 'email_inbound':
      return processInboundEmail(eventId, event.payload as InboundEmail, event.businessId, tx);
    default:
      throw new Error(`No reprocessing for webhook kind ${event.kind}`);
  }
}
