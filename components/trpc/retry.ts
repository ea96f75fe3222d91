import { STREAM_SUPERSEDED } from '@/server/shared/live-events';

/** Answers that another try cannot change: a signed-out session, a refusal, a bad or unknown input. */
const FINAL = new Set(['UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'BAD_REQUEST', 'UNPROCESSABLE_CONTENT']);

/**
 * React Query's `retry` for the inbox's reads: one that failed for a passing reason (the server
 * busy or restarting, a dropped connection) is tried again, up to three times over ~3.5 s
 * (retryDelayMs), before the inbox shows it as unavailable: a count or a page missing until the next
 * live event is worse than a short wait.
 */
export function retryQuery(failures: number, error: unknown): boolean {
  const code = (error as { data?: { code?: string } | null } | null)?.data?.code;
  return failures < 3 && !(code && FINAL.has(code));
}

export const retryDelayMs = (attempt: number) => Math.min(500 * 2 ** attempt, 4_000);

/**
 * The retryLink's `retry` for the live events stream: a stream the browser gave up on (the server
 * restarted, a proxy cut it, the business's streams were full) is opened again with backoff
 * (subscriptionRetryDelayMs), unless the session itself is gone, or a newer tab of this session took
 * the stream's place: reconnecting by itself would take it back from that tab, and the two would
 * take it from each other forever, so the inbox waits for a click (use-live-inbox.ts).
 */
export function retrySubscription(error: unknown): boolean {
  const code = (error as { data?: { code?: string } | null } | null)?.data?.code ?? '';
  return !['UNAUTHORIZED', 'FORBIDDEN', STREAM_SUPERSEDED.code].includes(code);
}

export const subscriptionRetryDelayMs = (attempt: number) => Math.min(500 * 2 ** attempt, 15_000);
