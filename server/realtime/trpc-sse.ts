import { TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import type { NotificationFrame } from '@/server/shared/notifications';
import type { PresenceFrame } from '@/server/shared/presence';
import type { InboxEvent } from './frames';

/**
 * The one place the live event stream depends on tRPC: the bytes of tRPC 11's SSE subscription
 * format, which the browser's tRPC client (`inbox.events`, httpSubscriptionLink with superjson)
 * reads. The stream (server/realtime/event-stream.ts) writes them straight to the socket; the tRPC
 * route itself never streams events (server/trpc/routers/inbox/events.ts). trpc-sse.test.ts compares each
 * frame with what tRPC's own SSE producer writes for the same value, byte for byte.
 */

/** The first frame of every subscription. */
export const CONNECTED_FRAME = Buffer.from('event: connected\ndata: {}\n\n\n');

/**
 * One event, as tRPC writes a `tracked(id, event)` value: a `data:` line of the superjson-serialized
 * value (plain JSON: `{ json: value }`, no meta) and an `id:` line, the event's id in the log. The
 * browser's EventSource keeps the last id it saw and sends it back as `Last-Event-ID` when it
 * reconnects; tRPC's client sends it as the input's `lastEventId` when it opens the stream again.
 */
export const eventFrame = (event: InboxEvent, id: number): Buffer =>
  Buffer.from(`data: ${JSON.stringify({ json: event })}\nid: ${id}\n\n\n`);

/**
 * A presence frame (server/realtime/presence.ts), as tRPC writes a value yielded untracked: no `id:`
 * line, since presence is not an event of the log. The EventSource keeps the last event's id
 * meanwhile, so a reconnecting client still resumes after the last event.
 */
export const presenceFrame = (frame: PresenceFrame): Buffer => untrackedFrame(frame);

/** Any frame that is not an event of the log (presence, a staff member's notification): no `id:` line. */
export const untrackedFrame = (frame: PresenceFrame | NotificationFrame): Buffer =>
  Buffer.from(`data: ${JSON.stringify({ json: frame })}\n\n\n`);

/** The codes a stream can end with. */
export type StreamEndCode = 'UNAUTHORIZED' | 'SERVICE_UNAVAILABLE' | 'CONFLICT' | 'TOO_MANY_REQUESTS';

/**
 * The last frame: tRPC's `serialized-error` with the error shape its client reads (the JSON-RPC
 * code decides whether it reconnects), as the tRPC route's error formatter (server/trpc/init.ts)
 * shapes it for the `inbox.events` path.
 */
export function errorFrame(code: StreamEndCode, message: string): Buffer {
  const httpStatus = getHTTPStatusCodeFromError(new TRPCError({ code, message }));
  const shape = { message, code: TRPC_ERROR_CODES_BY_KEY[code], data: { code, httpStatus, path: 'inbox.events' } };
  return Buffer.from(`event: serialized-error\ndata: ${JSON.stringify({ json: shape })}\n\n\n`);
}
