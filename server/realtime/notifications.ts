import { logger } from '@/server/logger';
import { NOTIFICATIONS_CHANNEL } from '@/server/services/notifications/handler';
import type { NotificationFrame } from '@/server/shared/notifications';
import { listenOn } from './listen';
import { untrackedFrame } from './trpc-sse';

/**
 * Notifications on a web process (docs/architecture.md#realtime): the notifications handler sends
 * one NOTIFY per notification it writes or folds into, at its commit
 * (server/services/notifications/handler.ts); every web process LISTENs and writes a `notification`
 * frame to the streams of that staff member only (a colleague's notifications are theirs). Nothing
 * is kept: a stream that was not open missed nothing it cannot read from the bell, which the inbox
 * reads again once its stream says `connected`. So a stream says it only once this process LISTENs
 * (`listening`, event-stream.ts): a notification written between that read and the LISTEN would
 * reach neither.
 */

type Payload = { businessId: number; staffId: number; notification: NotificationFrame['notification'] };

/** A NOTIFY payload back into its parts; null for anything that is not one. */
function parseNotification(payload: string): Payload | null {
  try {
    const p = JSON.parse(payload) as Payload;
    if (!Number.isSafeInteger(p.businessId) || !Number.isSafeInteger(p.staffId) || typeof p.notification?.id !== 'number')
      return null;
    return p;
  } catch {
    return null;
  }
}

export type NotificationSubscriber = { businessId: number; staffId: number; push: (frame: Buffer) => void };

export type NotificationHub = {
  subscribe: (subscriber: NotificationSubscriber) => () => void;
  receive: (payload: string) => void;
  /** Resolves true once the channel is LISTENed to; false when that failed (the next call tries again). */
  listening: () => Promise<boolean>;
};

/** `listen` subscribes `receive` to the channel and resolves once it does (false: it failed). */
export function createNotificationHub(listen: (onNotify: (payload: string) => void) => Promise<boolean>): NotificationHub {
  // By business, then staff member: a NOTIFY finds its few streams in two lookups.
  const subscribers = new Map<number, Map<number, Set<NotificationSubscriber>>>();
  function receive(payload: string) {
    const p = parseNotification(payload);
    if (!p) {
      logger.warn({ payload: payload.slice(0, 100) }, 'notifications: not a notification');
      return;
    }
    const streams = subscribers.get(p.businessId)?.get(p.staffId);
    if (!streams?.size) return;
    const frame: NotificationFrame = { type: 'notification', businessId: p.businessId, notification: p.notification };
    const bytes = untrackedFrame(frame);
    for (const s of streams) s.push(bytes);
  }
  // LISTENs on the first call (the first stream that opens), or again after a try that failed.
  let listened: Promise<boolean> | null = null;
  function listening() {
    listened ??= listen(receive).then((ok) => {
      if (!ok) listened = null;
      return ok;
    });
    return listened;
  }
  return {
    receive,
    listening,
    subscribe(subscriber) {
      let staff = subscribers.get(subscriber.businessId);
      if (!staff) subscribers.set(subscriber.businessId, (staff = new Map()));
      let set = staff.get(subscriber.staffId);
      if (!set) staff.set(subscriber.staffId, (set = new Set()));
      set.add(subscriber);
      const [business, mine] = [staff, set];
      return () => {
        mine.delete(subscriber);
        if (mine.size === 0 && business.get(subscriber.staffId) === mine) business.delete(subscriber.staffId);
        if (business.size === 0 && subscribers.get(subscriber.businessId) === business) subscribers.delete(subscriber.businessId);
      };
    },
  };
}

const globalForNotifications = globalThis as unknown as { __notifications?: NotificationHub };

/** The process's hub, LISTENing from the first stream that opens. */
export function notificationHub(): NotificationHub {
  return (globalForNotifications.__notifications ??= createNotificationHub((onNotify) =>
    listenOn(NOTIFICATIONS_CHANNEL, onNotify, () => {}),
  ));
}
