import { subscribeBusiness } from '@/server/realtime/listen';
import type { InboxEvent } from '@/server/realtime/frames';

/** A frame as a stream receives it: the event's frame and its id in the log. */
export type Received = InboxEvent & { eventId: number };

export type FollowedBusiness = {
  /** Resolves once the stream joined the log's tail and replayed what it missed: true, or false if the replay failed. */
  joined: Promise<boolean>;
  /** The next frame not taken yet; rejects after `ms`, or once the stream was interrupted. */
  next(ms?: number): Promise<Received>;
  stop(): void;
};

/**
 * The frames of one business as a stream of the log's tail (server/realtime/listen.ts) receives
 * them, for tests that follow the fan-out without an HTTP stream in between. `lastEventId`: resume
 * after that event, as a reconnecting client does.
 */
export function followBusiness(businessId: number, sessionId: number, lastEventId: number | null = null): FollowedBusiness {
  const queued: Received[] = [];
  let interrupted = false;
  let wake: (() => void) | null = null;
  const subscription = subscribeBusiness({
    businessId,
    sessionId,
    lastEventId,
    push: (event, eventId) => {
      queued.push({ ...event, eventId });
      wake?.();
    },
    interrupt: () => {
      interrupted = true;
      wake?.();
    },
    supersede: () => {},
  });
  if (!subscription.ok) throw new Error(subscription.message);
  return {
    joined: subscription.joined,
    async next(ms = 10_000) {
      const deadline = Date.now() + ms;
      while (queued.length === 0) {
        if (interrupted) throw new Error('interrupted');
        const left = deadline - Date.now();
        if (left <= 0) throw new Error('no event in time');
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, left);
        });
        wake = null;
      }
      return queued.shift()!;
    },
    stop: () => subscription.unsubscribe(),
  };
}
