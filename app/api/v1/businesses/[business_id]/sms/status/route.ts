import { updateSmsStatus as op } from '@/server/http/operations/messages';
import { route } from '@/server/http/route';
import { updateStatusFromApi } from '@/server/services/messages/status';

// POST: move an SMS's delivery status forward.
export const POST = route(op, ({ params, body, tx }) => updateStatusFromApi(params.business_id, 'sms', body, tx));
