import { TRPCError, type TrackedEnvelope } from '@trpc/server';
import type { InboxEvent } from '@/server/realtime/frames';
import type { NotificationFrame } from '@/server/shared/notifications';
import type { PresenceFrame } from '@/server/shared/presence';
import { staffProcedure } from '../../init';

export const eventProcedures = {
  /**
   * Live events of the staff member's business (SSE), fed from the event log, each tracked with its
   * event's id (the client resumes after it): the typed face of the stream the web server serves
   * itself on this path, in this procedure's wire format (server/realtime/event-stream.ts), in
   * production and in development alike. A request reaches this procedure only when that stream
   * declined it: no or an unknown session, the rate limit (both answered by the middleware before
   * this body), or a moment ago the database was down or the process began draining — then it ends
   * at once with SERVICE_UNAVAILABLE, which the client retries, reaching the web server's stream again.
   * Presence frames (server/realtime/presence.ts) and the staff member's notification frames
   * (server/realtime/notifications.ts) come untracked, without an id: the client's `id` for
   * one is the last event's, as the EventSource keeps it.
   */
  events: staffProcedure.subscription(async function* (): AsyncGenerator<
    TrackedEnvelope<InboxEvent | PresenceFrame | NotificationFrame>
  > {
    throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'Live events are not available right now; reconnecting' });
  }),
};
