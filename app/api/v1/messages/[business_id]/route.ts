import { processMessages as op } from '@/server/http/operations/messages';
import { route } from '@/server/http/route';
import { parseOrThrow } from '@/server/http/validation';
import {
  ProcessMessagesRequest,
  RecordEmailRequest,
  RecordSmsRequest,
  SendEmailRequest,
  SendSmsRequest,
} from '@/server/schemas/messages';
import { submitEmail, submitSms } from '@/server/services/messages/submit';

// POST: any channel, send or record — dispatches to the SMS or email operation.
export const POST = route(op, ({ params, body }) => {
  const { channel, mode } = parseOrThrow('body', ProcessMessagesRequest, body);
  if (channel === 'sms') {
    const parsed = parseOrThrow('body', mode === 'send' ? SendSmsRequest : RecordSmsRequest, body);
    return submitSms(params.business_id, parsed, mode);
  }
  const parsed = parseOrThrow('body', mode === 'send' ? SendEmailRequest : RecordEmailRequest, body);
  return submitEmail(params.business_id, parsed, mode);
});
