import { PROBLEM_STATUSES } from '@/server/shared/message-statuses';

/** Small, pure formatting helpers for the inbox (tested in format.test.ts). */

export function initials(name: string | null | undefined): string {
  const parts = (name ?? '').trim().split(/\s+/).filter(Boolean);
  if (!parts.length) return '?';
  return ((parts[0]![0] ?? '') + (parts.length > 1 ? (parts[parts.length - 1]![0] ?? '') : '')).toUpperCase();
}

/** "now", "5m", "3h", "Mon", "Nov 3", "Nov 3, 2024": dense like a mail client's list. */
export function relativeTime(iso: string | null | undefined, now = new Date()): string {
  if (!iso) return '';
  const then = new Date(iso);
  const seconds = Math.round((now.getTime() - then.getTime()) / 1000);
  if (seconds < 60) return 'now';
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`;
  if (seconds < 6 * 86_400) return then.toLocaleDateString('en-US', { weekday: 'short' });
  if (then.getFullYear() === now.getFullYear()) return then.toLocaleDateString('en-US', { month: 'short', day: 'numeric' });
  return then.toLocaleDateString('en-US', { month: 'short', day: 'numeric', year: 'numeric' });
}

/** The date separator label in the timeline: Today, Yesterday, or the full date. */
export function dayLabel(iso: string, now = new Date()): string {
  const day = new Date(iso);
  const startOf = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const diffDays = Math.round((startOf(now) - startOf(day)) / 86_400_000);
  if (diffDays === 0) return 'Today';
  if (diffDays === 1) return 'Yesterday';
  return day.toLocaleDateString('en-US', {
    weekday: 'long',
    month: 'long',
    day: 'numeric',
    year: day.getFullYear() === now.getFullYear() ? undefined : 'numeric',
  });
}

export function clockTime(iso: string): string {
  return new Date(iso).toLocaleTimeString('en-US', { hour: 'numeric', minute: '2-digit' });
}

export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '';
  const m = Math.floor(seconds / 60);
  const s = seconds % 60;
  return `${m}:${String(s).padStart(2, '0')}`;
}

/** Splits text around case-insensitive matches of `term`, for highlighting without HTML. */
export function splitMatches(text: string, term: string): { text: string; match: boolean }[] {
  const needle = term.trim().toLowerCase();
  if (needle.length < 3) return [{ text, match: false }];
  const parts: { text: string; match: boolean }[] = [];
  const haystack = text.toLowerCase();
  let from = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, from)) {
    if (at > from) parts.push({ text: text.slice(from, at), match: false });
    parts.push({ text: text.slice(at, at + needle.length), match: true });
    from = at + needle.length;
  }
  if (from < text.length) parts.push({ text: text.slice(from), match: false });
  return parts;
}

export const STATUS_LABEL: Record<string, string> = {
  initiated: 'Initiated',
  scheduled: 'Scheduled',
  queued: 'Queued',
  sending: 'Sending',
  sent: 'Sent',
  delivered: 'Delivered',
  read: 'Read',
  received: 'Received',
  undelivered: 'Undelivered',
  failed: 'Failed',
  bounced: 'Bounced',
  canceled: 'Canceled',
  ringing: 'Ringing',
  in_progress: 'In progress',
  completed: 'Completed',
  busy: 'Busy',
  no_answer: 'No answer',
  pending: 'Sending…',
};

export const FAILED_STATUSES: ReadonlySet<string> = new Set(PROBLEM_STATUSES);

/**
 * Items of pages fetched by offset, each once (the first wins). While a list re-sorts under live
 * activity (a conversation jumps to the top, a new message shifts the timeline), the next page
 * can repeat rows already shown; repeated React keys would make rows vanish or duplicate.
 */
export function uniqueBy<T>(items: T[], key: (item: T) => unknown): T[] {
  const seen = new Set<unknown>();
  return items.filter((item) => {
    const k = key(item);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/**
 * What went wrong with a tRPC call, in the service's words: each field's message for a 422 (a
 * service's issues, or the input's zod errors), else the error's own message; never the raw JSON of
 * the issues. `labels` names the fields as the form shows them.
 */
export function describeError(
  error: { message: string; data?: unknown } | null | undefined,
  labels: Record<string, string> = {},
): string | null {
  if (!error) return null;
  const data = error.data as
    | { issues?: { loc: unknown[]; msg: string }[] | null; zodError?: { fieldErrors: Record<string, string[]> } | null }
    | undefined;
  // A service's issue names its place in the request body (['body', 'messages', 0, 'media_ids', 1]): the named field counts.
  const label = (loc: unknown[]) => {
    const field = [...loc].reverse().find((part): part is string => typeof part === 'string') ?? '';
    return labels[field] ?? field;
  };
  if (data?.issues?.length) return data.issues.map((i) => `${label(i.loc)}: ${i.msg}`).join(' · ');
  const fields = Object.entries(data?.zodError?.fieldErrors ?? {});
  if (fields.length) return fields.map(([field, messages]) => `${labels[field] ?? field}: ${messages.join(', ')}`).join(' · ');
  return error.message;
}
