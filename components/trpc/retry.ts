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
