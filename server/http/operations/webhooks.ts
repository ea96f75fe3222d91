import { z } from 'zod';
import { SENDGRID_EVENTS_MAX_BYTES } from '@/server/providers/sendgrid-signature';
import { TWILIO_WEBHOOK_MAX_BYTES } from '@/server/providers/twilio-signature';
import { defineOperation } from '../operation';

const TwilioForm = z
  .object({
    MessageSid: z.string().optional(),
    AccountSid: z.string().optional(),
    From: z.string().optional(),
    To: z.string().optional(),
  })
  .loose()
  .meta({ description: 'Twilio webhook parameters, form-encoded; every posted parameter is covered by X-Twilio-Signature.' });

const twilioHook = {
  auth: 'webhook' as const,
  verifiedBy: 'twilio-signature' as const,
  bodyType: 'application/x-www-form-urlencoded' as const,
  maxBodyBytes: TWILIO_WEBHOOK_MAX_BYTES,
  docBody: TwilioForm,
  errors: [403, 413],
};

export const twilioSmsIncoming = defineOperation({
  operationId: 'twilioSmsIncoming',
  method: 'post',
  path: '/webhooks/twilio/sms/incoming',
  tag: 'telephony webhooks',
  summary: 'Process incoming SMS replies',
  description: 'Verified by X-Twilio-Signature (403 otherwise), stored raw, deduplicated by MessageSid; answers empty TwiML.',
  responseType: 'text/xml',
  response: z.string(),
  ...twilioHook,
});

export const twilioSmsStatus = defineOperation({
  operationId: 'twilioSmsStatus',
  method: 'post',
  path: '/webhooks/twilio/sms/status',
  tag: 'telephony webhooks',
  summary: 'Process SMS delivery status updates',
  description:
    'Verified, stored, deduplicated by (MessageSid, MessageStatus, ErrorCode); the status only moves forward. Unknown MessageSid: stored, 200.',
  ...twilioHook,
});

export const twilioVoiceStatus = defineOperation({
  operationId: 'twilioVoiceStatus',
  method: 'post',
  path: '/webhooks/twilio/voice/status',
  tag: 'telephony webhooks',
  summary: 'Update voice call status in DB',
  description:
    "Verified, stored, deduplicated by (CallSid, CallStatus); exactly one CALL message per call, moved only forward. A leg we dialled (with ParentCallSid) updates its parent call's message.",
  ...twilioHook,
});

const providerPath = z.object({
  provider: z.enum(['sendgrid'], { error: 'must be one of: sendgrid' }).meta({ id: 'ExternalEmailProvider' }),
});

export const emailProviderEvents = defineOperation({
  operationId: 'emailProviderEvents',
  method: 'post',
  path: '/email/webhooks/{provider}',
  tag: 'email',
  summary: 'Handle external email provider webhooks',
  description:
    'SendGrid Event Webhook: a JSON array of events, verified with SENDGRID_WEBHOOK_PUBLIC_KEY (ECDSA) when configured; each event stored and deduplicated by sg_event_id.',
  auth: 'webhook',
  verifiedBy: 'sendgrid-signature',
  params: providerPath,
  maxBodyBytes: SENDGRID_EVENTS_MAX_BYTES,
  docBody: z.array(
    z
      .object({
        event: z.string(),
        sg_event_id: z.string().optional(),
        sg_message_id: z.string().optional(),
        message_id: z.string().optional(),
      })
      .loose(),
  ),
  response: z.object({ received: z.number().int(), stored: z.number().int(), duplicates: z.number().int() }),
  errors: [400, 403, 413, 422],
});

export const emailProviderInbound = defineOperation({
  operationId: 'emailProviderInbound',
  method: 'post',
  path: '/email/webhooks/{provider}/inbound',
  tag: 'email',
  summary: 'Client replies by email (SendGrid Inbound Parse)',
  description: 'multipart/form-data from Inbound Parse; authenticated by `?secret=EMAIL_INBOUND_SECRET` (403 otherwise).',
  auth: 'webhook',
  verifiedBy: 'inbound-secret',
  params: providerPath,
  query: z.object({ secret: z.string().max(256).optional() }),
  bodyType: 'multipart/form-data',
  docBody: z
    .object({
      from: z.string(),
      to: z.string(),
      subject: z.string().optional(),
      text: z.string().optional(),
      html: z.string().optional(),
      headers: z.string().optional(),
      envelope: z.string().optional(),
    })
    .loose(),
  response: z.object({ status: z.string() }),
  errors: [400, 403, 413],
});
