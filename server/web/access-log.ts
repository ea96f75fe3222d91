import type { Logger } from '@/server/logger';

/**
 * The access line: one per answered request, `request` with its method, path, status and duration
 * in ms. The path only: a query string can carry a one-time login code, a webhook secret or a
 * search, and nothing of the headers or the body is written (API keys, tokens, cookies, texts).
 * Skipped, URL parse included, when info is off (production benchmarks run at warn).
 */
export function logRequest(log: Logger, method: string, url: string, status: number, startedAt: number): void {
  if (!log.isLevelEnabled('info')) return;
  log.info(
    {
      method,
      path: new URL(url, 'http://localhost').pathname,
      status,
      ms: Math.round(performance.now() - startedAt),
    },
    'request',
  );
}
