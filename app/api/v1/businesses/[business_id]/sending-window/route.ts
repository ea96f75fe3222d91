import { getSendingWindows, setBusinessSendingWindow as setOp } from '@/server/http/operations/businesses';
import { route } from '@/server/http/route';
import { sendingWindowSettings, setBusinessSendingWindow } from '@/server/services/sending-windows';

// GET: quiet hours settings; PUT: the business's sending window.
export const GET = route(getSendingWindows, ({ params, tx }) => sendingWindowSettings(params.business_id, tx));
export const PUT = route(setOp, ({ params, body, tx }) => setBusinessSendingWindow(params.business_id, body, tx));
