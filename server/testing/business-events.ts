import { subscribeBusiness } from '@/server/realtime/listen';
import type { InboxEvent } from '@/server/services/live-events/publish';

export type FollowedBusiness = {
  /** Resolves once the LISTEN hub listens: what is published after it arrives. */
  ready: Promise<unknown>;
  /** The next event not taken yet; rejects after `ms`, or once the stream was interrupted. */
  next(ms?: number): Promise<InboxEvent>;
  stop(): void;
};

/**
 * The events of one business as a stream of the LISTEN hub (server/realtime/listen.ts) receives
 * them, for tests that follow the fan-out without an HTTP stream in between.
 */
export function followBusiness(businessId: number, sessionId: number): FollowedBusiness {
  const queued: InboxEvent[] = [];
  let interrupted = false;
  let wake: (() => void) | null = null;
  const subscription = subscribeBusiness({
    businessId,
    sessionId,
    push: (event) => {
      queued.push(event);
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
    ready: subscription.ready,
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
