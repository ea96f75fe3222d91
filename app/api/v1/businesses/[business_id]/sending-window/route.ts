import { getSendingWindows, setBusinessSendingWindow as setOp } from '@/server/http/operations/businesses';
import { route } from '@/server/http/route';
import { sendingWindowSettings, setBusinessSendingWindow } from '@/server/services/sending-windows';

// GET: quiet hours settings; PUT: the business's sending window.
export const GET = route(getSendingWindows, ({ params }) => sendingWindowSettings(params.business_id));
export const PUT = route(setOp, ({ params, body }) => setBusinessSendingWindow(params.business_id, body));
