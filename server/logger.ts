import pino from 'pino';

/**
 * One pino logger per process. Secrets never reach it: API keys, tokens and cookies are redacted by
 * path wherever a caller passes headers or bodies along.
 */
export const logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { pid: process.pid },
  redact: {
    paths: ['headers["x-api-key"]', 'headers.cookie', 'headers.authorization', '*.access_token', '*.api_key', '*.password'],
    censor: '[redacted]',
  },
});

export type Logger = typeof logger;
