import { processMessages as op } from '@/server/http/operations/messages';
import { route } from '@/server/http/route';
import { asWritingStaff } from '@/server/web/staff-context';
import { parseOrThrow } from '@/server/http/validation';
import {
  OTHER_MODE_FIELDS,
  ProcessMessagesRequest,
  RecordEmailRequest,
  RecordSmsRequest,
  SendEmailRequest,
  SendSmsRequest,
} from '@/server/schemas/messages';
import { submitEmail, submitSms } from '@/server/services/messages/submit';

// POST: any channel, send or record — dispatches to the SMS or email operation. The fields only the
// other mode reads are type-checked too (OTHER_MODE_FIELDS), then ignored.
export const POST = route(op, ({ caller, params, body, tx }) => {
  const { channel, mode } = parseOrThrow('body', ProcessMessagesRequest, body);
  const otherMode = OTHER_MODE_FIELDS[channel][mode];
  if (channel === 'sms') {
    const parsed = parseOrThrow('body', mode === 'send' ? SendSmsRequest : RecordSmsRequest, body, otherMode);
    return submitSms(params.business_id, asWritingStaff(caller, parsed), mode, {}, tx);
  }
  const parsed = parseOrThrow('body', mode === 'send' ? SendEmailRequest : RecordEmailRequest, body, otherMode);
  return submitEmail(params.business_id, asWritingStaff(caller, parsed), mode, tx);
});
