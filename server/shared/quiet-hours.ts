import { wallClock, zonedInstant } from './zoned-time';

/**
 * Quiet hours (docs/api.md#quiet-hours): automated texts go out only inside a sending window of the
 * recipient's local day. Pure and browser-safe: the server decides with it when a request is
 * queued, the composer with it what to tell staff before they send.
 */

/** Minutes of the local day, [start, end): 08:00–21:00 is { start: 480, end: 1260 }. */
export type SendingWindow = { start: number; end: number };

/** The US federal window (TCPA): no telemarketing calls or texts before 8 a.m. or after 9 p.m. at the recipient's location. */
export const DEFAULT_SENDING_WINDOW: SendingWindow = { start: 8 * 60, end: 21 * 60 };

export type SendingWindowPreset = SendingWindow & { id: string; name: string; source: string };

/**
 * The windows the settings page offers. The states listed set a stricter window for telephone
 * solicitation (which includes marketing texts) than the federal one; a business whose clients live
 * there picks it for the location that serves them. Not legal advice: docs/api.md#quiet-hours.
 */
export const SENDING_WINDOW_PRESETS: readonly SendingWindowPreset[] = [
  {
    id: 'us_federal',
    name: 'US federal (08:00–21:00)',
    ...DEFAULT_SENDING_WINDOW,
    source: 'Telephone Consumer Protection Act, 47 CFR § 64.1200(c)(1)',
  },
  {
    id: 'us_florida',
    name: 'Florida (08:00–20:00)',
    start: 8 * 60,
    end: 20 * 60,
    source: 'Florida Telephone Solicitation Act, Fla. Stat. § 501.059(8)(a)',
  },
  {
    id: 'us_oklahoma',
    name: 'Oklahoma (08:00–20:00)',
    start: 8 * 60,
    end: 20 * 60,
    source: 'Oklahoma Telephone Solicitation Act of 2022, 15 O.S. § 775C.4',
  },
  {
    id: 'us_maryland',
    name: 'Maryland (08:00–20:00)',
    start: 8 * 60,
    end: 20 * 60,
    source: 'Maryland Stop the Spam Calls Act of 2023, Md. Code, Com. Law § 14-4503',
  },
];

/** The preset a window equals, if any (the settings page shows its name). */
export function presetOf(window: SendingWindow): SendingWindowPreset | null {
  return SENDING_WINDOW_PRESETS.find((p) => p.start === window.start && p.end === window.end) ?? null;
}

/** 480 → "08:00"; 1440 → "24:00" (a window may run to midnight). */
export function clockOf(minutes: number): string {
  return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

/** "08:00" → 480; "24:00" is allowed (the end of the day); anything else malformed → null. */
export function minutesOf(clock: string): number | null {
  const m = /^([01]\d|2[0-4]):([0-5]\d)$/.exec(clock);
  if (!m) return null;
  const minutes = Number(m[1]) * 60 + Number(m[2]);
  return minutes <= 24 * 60 ? minutes : null;
}

/**
 * Which texts quiet hours hold. Everything that is not a conversation: `campaign`, `reminder` and
 * `transactional` messages, and whatever the category, a `marketing` or `review_request`
 * notification. A `conversational` message is a reply and goes at once (the inbox asks staff first
 * when the conversation is not live: `isLiveConversation`).
 */
export function heldByQuietHours(category: string, notificationType: string | null | undefined): boolean {
  if (notificationType === 'marketing' || notificationType === 'review_request') return true;
  return category !== 'conversational';
}

/** A conversation is live while the client's last message is under a day old: staff replies to it are not held. */
export const LIVE_CONVERSATION_MS = 24 * 60 * 60 * 1000;

export function isLiveConversation(lastInboundAt: Date | string | null, now: Date = new Date()): boolean {
  return lastInboundAt !== null && now.getTime() - new Date(lastInboundAt).getTime() < LIVE_CONVERSATION_MS;
}

/** The minute of the day `timeZone`'s clock shows at `at`. */
export function localMinute(timeZone: string, at: Date): number {
  const w = wallClock(timeZone, at);
  return w.hour * 60 + w.minute;
}

/** True while `timeZone`'s clock is inside the window. */
export function windowOpen(timeZone: string, window: SendingWindow, at: Date): boolean {
  const minute = localMinute(timeZone, at);
  return minute >= window.start && minute < window.end;
}

/**
 * The first moment at or after `at` inside the window: `at` itself while it is open, else the
 * window's next start in `timeZone` (today's before it opens, tomorrow's after it closed), also
 * across daylight-saving changes. The database's sending_window_next_open (migration 0014) is the
 * same rule for the send worker.
 */
export function nextOpening(timeZone: string, window: SendingWindow, at: Date): Date {
  const minute = localMinute(timeZone, at);
  if (minute >= window.start && minute < window.end) return at;
  const today = wallClock(timeZone, at);
  const day = new Date(Date.UTC(today.year, today.month - 1, today.day + (minute >= window.end ? 1 : 0)));
  return zonedInstant(
    timeZone,
    day.getUTCFullYear(),
    day.getUTCMonth() + 1,
    day.getUTCDate(),
    Math.floor(window.start / 60),
    window.start % 60,
  );
}
