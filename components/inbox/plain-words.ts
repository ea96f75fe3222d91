import { MAX_SMS_LENGTH } from '@/server/shared/limits';
import { isStatusIn, RETRYABLE_STATUSES } from '@/server/shared/message-statuses';
import { smsSegments } from '@/server/shared/sms-segments';
import { wallClock } from '@/server/shared/zoned-time';
import { STATUS_LABEL } from './format';

/**
 * The inbox's words for a front desk (pure; tested in plain-words.test.ts): what a conversation's
 * preview says, what the composer's button will do, how many texts a message costs, and what
 * Retry does. Technical detail (encodings, segments) goes in a tooltip, never in the sentence.
 */

const CHANNEL_LABEL: Record<string, string> = { sms: 'SMS', email: 'Email', voice: 'Call' };

type PreviewSource = {
  preview: {
    message_type: string;
    channel: string | null;
    direction: string;
    status: string;
    content: string | null;
  } | null;
  last_message_content: string | null;
  last_updated_channel: string | null;
};

/** What a list row shows: a channel chip (none for a note), a state in words, the text. */
export type PreviewWords = { note: boolean; chip: string | null; state: string | null; text: string };

/** docs/api.md#previews: a note says so and has no channel; a waiting or failed message says so. */
export function previewWords(row: PreviewSource): PreviewWords {
  const p = row.preview;
  if (!p) {
    return {
      note: false,
      chip: row.last_updated_channel ? (CHANNEL_LABEL[row.last_updated_channel] ?? null) : null,
      state: null,
      text: row.last_message_content ?? '',
    };
  }
  if (p.message_type === 'NOTE') return { note: true, chip: null, state: 'Note:', text: p.content ?? '' };
  const chip = p.channel ? (CHANNEL_LABEL[p.channel] ?? null) : null;
  const text = p.content ?? (p.message_type === 'CALL' ? (p.direction === 'inbound' ? 'Incoming call' : 'Outgoing call') : '');
  const state =
    p.status === 'scheduled'
      ? 'Scheduled ·'
      : ['failed', 'undelivered', 'bounced', 'canceled'].includes(p.status) && p.message_type !== 'CALL'
        ? `${STATUS_LABEL[p.status] ?? p.status} ·`
        : null;
  return { note: false, chip, state, text };
}

/** "9:00", "21:30": the clock as the quick picks write it. */
const clock = (hour: number, minute: number) => `${hour}:${String(minute).padStart(2, '0')}`;
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * When a message goes, shortly, in `timeZone`: "today at 21:30", "at Tue 9:00" within the week,
 * "at Dec 3 9:00" further on.
 */
export function whenWords(timeZone: string, at: Date, now: Date = new Date()): string {
  const w = wallClock(timeZone, at);
  const today = wallClock(timeZone, now);
  const time = clock(w.hour, w.minute);
  const days = Math.round((Date.UTC(w.year, w.month - 1, w.day) - Date.UTC(today.year, today.month - 1, today.day)) / 86_400_000);
  if (days === 0) return `today at ${time}`;
  if (days > 0 && days < 7) return `at ${WEEKDAYS[w.weekday]} ${time}`;
  return `at ${MONTHS[w.month - 1]} ${w.day} ${time}`;
}

/** A `datetime-local` value showing `at` on `timeZone`'s clock: fromLocalInput's inverse, to fill a field in. */
export function toLocalInput(timeZone: string, at: Date): string {
  const w = wallClock(timeZone, at);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${w.year}-${two(w.month)}-${two(w.day)}T${two(w.hour)}:${two(w.minute)}`;
}

/**
 * The composer's one button, saying what will happen: "Add note", "Send", "Send at Tue 9:00" (a
 * chosen time, or the end of the client's quiet hours), or "Schedule" while a time is still to be
 * chosen.
 */
export function actionLabel(a: {
  mode: 'sms' | 'email' | 'note';
  busy: boolean;
  /** Send later: the chosen time, in `timeZone`; null for now. */
  sendAt: Date | null;
  timeZone: string;
  /** "Choose a time…" is selected. */
  choosingTime: boolean;
  /** Quiet hours hold a text sent now until this moment, in the client's `heldZone`. */
  heldUntil: Date | null;
  heldZone: string | null;
  now?: Date;
}): string {
  if (a.mode === 'note') return a.busy ? 'Adding…' : 'Add note';
  if (a.busy) return 'Sending…';
  if (a.sendAt) return `Send ${whenWords(a.timeZone, a.sendAt, a.now)}`;
  if (a.choosingTime) return 'Schedule';
  if (a.heldUntil && a.heldZone) return `Send ${whenWords(a.heldZone, a.heldUntil, a.now)}`;
  return 'Send';
}

/** How many texts a message is billed as, in words, and the technical detail for a tooltip. */
export function textCount(text: string, pictures = 0): { words: string; detail: string; warning: string | null } {
  if (text.length > MAX_SMS_LENGTH)
    return {
      words: `Too long: ${text.length.toLocaleString('en-US')} of ${MAX_SMS_LENGTH.toLocaleString('en-US')} characters`,
      detail: '',
      warning: null,
    };
  if (pictures > 0)
    return {
      words: '1 picture message',
      detail: `Sent as one MMS with ${pictures} picture${pictures === 1 ? '' : 's'}; its text is not split into segments.`,
      warning: null,
    };
  if (text.length === 0) return { words: '', detail: '', warning: null };
  const s = smsSegments(text);
  const [one, part] = s.encoding === 'GSM-7' ? [160, 153] : [70, 67];
  const detail =
    `${text.length} characters, ${s.encoding}: ${s.segments} segment${s.segments === 1 ? '' : 's'} ` +
    `(${one} fit in one, ${part} per segment when split). Each segment is billed as one text.`;
  return {
    words: `${s.segments} text${s.segments === 1 ? '' : 's'}`,
    detail,
    warning: s.encoding === 'UCS-2' ? `Emoji or special characters: each text holds ${one} characters instead of 160` : null,
  };
}

type FailedMessage = {
  direction: string;
  message_type: string;
  message_status: string;
  error_code: string | null;
};

/**
 * Whether the timeline offers Retry on a message, and what it will do. Never for an opt-out (it
 * would fail the same way) nor for what is not a failed outbound text or email (docs/api.md#retry).
 */
export function retryOffer(m: FailedMessage): { canRetry: boolean; what: string | null } {
  const retryable =
    m.direction === 'outbound' &&
    (m.message_type === 'TEXT' || m.message_type === 'EMAIL') &&
    isStatusIn(RETRYABLE_STATUSES, m.message_status);
  if (!retryable || m.error_code === 'opted_out') return { canRetry: false, what: null };
  const kind = m.message_type === 'EMAIL' ? 'email' : 'text';
  return {
    canRetry: true,
    what: `Retry sends this same ${kind} again, once. To change the words, write a new ${kind} below.`,
  };
}
