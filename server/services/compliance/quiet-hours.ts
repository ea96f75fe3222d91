import { and, desc, eq, gt, sql } from 'drizzle-orm';
import { db, type Tx } from '@/server/db/client';
import { businesses, clients, locations, messages, type QuietHoursWindow } from '@/db/schema';
import { phoneTimeZone } from '@/server/lib/phone-time-zone';
import {
  isLiveConversation,
  LIVE_CONVERSATION_MS,
  localMinute,
  nextOpening,
  windowOpen,
  type SendingWindow,
} from '@/server/shared/quiet-hours';

/**
 * Quiet hours (docs/api.md#quiet-hours): whose clock and which window a text to a client keeps to.
 * The window is the client's location's own, else the business's; the clock is the client's time
 * zone when known, else the one their number's range lies in, else the location's, else the
 * business's. Submit asks it for every text it may hold; the composer, to warn staff before they send.
 */

export type TimeZoneSource = 'client' | 'phone_number' | 'location' | 'business';

/** A business's windows and zones, read once per request. */
export type SendingRules = {
  business: { timeZone: string; window: SendingWindow };
  locations: Map<number, { timeZone: string | null; window: SendingWindow | null }>;
};

export async function sendingRules(businessId: number, tx: Tx = db): Promise<SendingRules> {
  const [[business], rows] = await Promise.all([
    tx
      .select({ timeZone: businesses.timezone, start: businesses.sendingWindowStart, end: businesses.sendingWindowEnd })
      .from(businesses)
      .where(eq(businesses.id, businessId)),
    tx
      .select({
        id: locations.id,
        timeZone: locations.timezone,
        start: locations.sendingWindowStart,
        end: locations.sendingWindowEnd,
      })
      .from(locations)
      .where(eq(locations.businessId, businessId)),
  ]);
  return {
    business: {
      timeZone: business?.timeZone || 'UTC',
      window: { start: business?.start ?? 480, end: business?.end ?? 1260 },
    },
    locations: new Map(
      rows.map((l) => [
        l.id,
        { timeZone: l.timeZone, window: l.start !== null && l.end !== null ? { start: l.start, end: l.end } : null },
      ]),
    ),
  };
}

export type Recipient = { timeZone: string | null; phoneNumber: string | null; locationId: number | null };

/** The window a text to this recipient keeps to, and where its clock came from. */
export function recipientWindow(rules: SendingRules, recipient: Recipient): QuietHoursWindow & { source: TimeZoneSource } {
  const location = recipient.locationId !== null ? rules.locations.get(recipient.locationId) : undefined;
  const window = location?.window ?? rules.business.window;
  const fromPhone = recipient.phoneNumber ? phoneTimeZone(recipient.phoneNumber) : null;
  const [time_zone, source]: [string, TimeZoneSource] = recipient.timeZone
    ? [recipient.timeZone, 'client']
    : fromPhone
      ? [fromPhone, 'phone_number']
      : location?.timeZone
        ? [location.timeZone, 'location']
        : [rules.business.timeZone, 'business'];
  return { time_zone, start: window.start, end: window.end, source };
}

/** When a held text goes: `at` while the recipient's window is open, else its next opening. */
export function holdUntil(window: QuietHoursWindow, at: Date): Date {
  return nextOpening(window.time_zone, window, at);
}

/** What the composer shows about the conversation's client before staff send a text. */
export async function conversationQuietHours(
  businessId: number,
  conversation: { id: number; clientId: number; locationId: number | null },
  now: Date = new Date(),
  tx: Tx = db,
) {
  const [client] = await tx
    .select({ timeZone: clients.timezone, phoneNumber: clients.phoneNumber, locationId: clients.locationId })
    .from(clients)
    .where(and(eq(clients.businessId, businessId), eq(clients.id, conversation.clientId)));
  const rules = await sendingRules(businessId, tx);
  const window = recipientWindow(rules, {
    timeZone: client?.timeZone ?? null,
    phoneNumber: client?.phoneNumber ?? null,
    locationId: client?.locationId ?? conversation.locationId,
  });
  const lastInboundAt = await lastInboundWithinADay(businessId, conversation.id, now, tx);
  const open = windowOpen(window.time_zone, window, now);
  return {
    ...window,
    local_minute: localMinute(window.time_zone, now),
    open,
    next_opening: open ? null : nextOpening(window.time_zone, window, now),
    live: isLiveConversation(lastInboundAt, now),
  };
}

/** The client's latest message in the conversation if it is under a day old (the index walks one day at most). */
export async function lastInboundWithinADay(businessId: number, conversationId: number, now: Date, tx: Tx = db) {
  const [row] = await tx
    .select({ sentAt: messages.sentAt })
    .from(messages)
    .where(
      and(
        eq(messages.businessId, businessId),
        eq(messages.conversationId, conversationId),
        eq(messages.direction, 'inbound'),
        gt(messages.sentAt, sql`${new Date(now.getTime() - LIVE_CONVERSATION_MS).toISOString()}::timestamptz`),
      ),
    )
    .orderBy(desc(messages.sentAt))
    .limit(1);
  return row?.sentAt ?? null;
}
