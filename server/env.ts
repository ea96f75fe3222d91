import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { trimEnd } from '@/server/lib/text';

/**
 * The one reader of process.env. Parsed lazily (so `next build` can import route modules without a
 * full configuration) and cached; `loadEnv()` is called first thing by every process entry point so
 * a bad value stops the process at start with a message naming the variable.
 */

const optionalString = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

const urlString = (protocols: string[]) =>
  z
    .string()
    .trim()
    .refine(
      (v) => {
        try {
          return protocols.includes(new URL(v).protocol);
        } catch {
          return false;
        }
      },
      `must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`,
    );

const schema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    DATABASE_URL: urlString(['postgres:', 'postgresql:']).optional(),
    /** `false` behind a transaction-pooling PgBouncer (< 1.21): no named prepared statements. */
    DATABASE_PREPARE: z.enum(['true', 'false']).default('true'),
    /** A direct (session) connection for the one LISTEN per web process, when DATABASE_URL is a pooler. */
    DATABASE_LISTEN_URL: urlString(['postgres:', 'postgresql:']).optional(),
    /**
     * Connections in each process's pool; more statements at once are pipelined on them (postgres.js).
     * Small on purpose: past a few per database core, more connections only add backends that share
     * the same cores with each other and with the web process (bench:inbox on 2 cores: a pool of 6
     * served the mixed inbox workload faster than 10; docs/performance.md#benchinbox).
     */
    DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(6),
    /**
     * Connections for the hot one-statement reads run outside a transaction (server/db/prepared.ts): few,
     * so that under load their statements are pipelined on backends that are already running
     * instead of each waking a sleeping one, whose backend then takes the web thread's core
     * (bench:inbox prints the web thread's wait for a core: docs/performance.md#benchinbox).
     */
    DATABASE_HOT_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(2),
    PORT: z.coerce.number().int().min(1).max(65535).default(3000),
    PUBLIC_BASE_URL: urlString(['http:', 'https:']).optional(),
    PLATFORM_API_KEY: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
    SESSION_SECRET: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
    /** Signs the expiring URLs Twilio fetches MMS uploads from (docs/api.md#mms-uploads); derived from SESSION_SECRET when unset. */
    MEDIA_URL_SECRET: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
    /** What each business's MMS uploads may take in storage, counted once per distinct content (docs/api.md#mms-uploads). */
    MEDIA_STORAGE_QUOTA_BYTES: z.coerce
      .number()
      .int()
      .min(0)
      .max(2 ** 40)
      .default(2 ** 30),
    SMS_PROVIDER: z.enum(['twilio', 'sandbox']).optional(),
    TWILIO_ACCOUNT_SID: optionalString,
    TWILIO_AUTH_TOKEN: optionalString,
    TWILIO_API_KEY_SID: optionalString,
    TWILIO_API_KEY_SECRET: optionalString,
    TWILIO_TWIML_APP_SID: optionalString,
    TWILIO_API_BASE_URL: urlString(['http:', 'https:']).optional(),
    EMAIL_PROVIDER: z.enum(['smtp', 'sandbox']).optional(),
    SMTP_URL: urlString(['smtp:', 'smtps:']).optional(),
    /** The sender of staff notification emails and waiting digests; unset: notifications@ the host of PUBLIC_BASE_URL. */
    NOTIFICATION_EMAIL_FROM: optionalString.pipe(z.email('must be an email address').max(254).optional()),
    SENDGRID_WEBHOOK_PUBLIC_KEY: optionalString,
    EMAIL_INBOUND_SECRET: optionalString,
    SANDBOX_ENABLED: z.enum(['true', 'false']).optional(),
    /** Webhook endpoints on plain http and on addresses that are not public (server/lib/public-post.ts): development and tests only. */
    WEBHOOK_ALLOW_PRIVATE_URLS: z.enum(['true', 'false']).default('false'),
    RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(600),
    /**
     * Live event streams (the inbox's `inbox.events`) one session may hold open on a web process: a
     * staff member's tabs. One more ends the session's oldest (server/realtime/stream-meter.ts).
     */
    EVENT_STREAMS_PER_SESSION: z.coerce.number().int().min(1).max(50).default(5),
    /** Live event streams one business may hold open on a web process; past it a new one is refused. */
    EVENT_STREAMS_PER_BUSINESS: z.coerce.number().int().min(1).max(100_000).default(200),
    /**
     * What a live event stream may have waiting unsent in the web process, in KiB; a reader that
     * falls further behind is cut (it reconnects and refetches). At most 256: the memory an open
     * inbox may cost is part of what the per-business cap bounds.
     */
    EVENT_STREAM_MAX_UNSENT_KIB: z.coerce.number().int().min(16).max(256).default(256),
    /**
     * Requests per minute of one business across all its API keys and staff sessions, on top of each
     * credential's own RATE_LIMIT_PER_MINUTE: a key that mints sessions cannot multiply its budget.
     * Unset: 10 × RATE_LIMIT_PER_MINUTE.
     */
    RATE_LIMIT_PER_BUSINESS_PER_MINUTE: optionalString.pipe(z.coerce.number<string>().int().min(1).max(2_000_000_000).optional()),
    /** Sessions minted by POST /auth/token per business per minute, whoever asks (docs/api.md#rate-limits). */
    AUTH_TOKENS_PER_BUSINESS_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(60),
    /** Days the event log keeps an event (whole days: the worker drops each day's partition once past it). */
    EVENT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
    WORKER_MAINTENANCE_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(600).default(15),
    /** How long a web process drains on SIGTERM before it force-closes connections and exits 1. */
    SHUTDOWN_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(20),
    RECOVERY_SWEEP_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(600).default(10),
    /** The sweep takes a message in flight for orphaned once it has gone this long without a live send job. */
    RECOVERY_ORPHANED_SEND_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
    /** The sweep processes a stored webhook event at most this many times; after that it stays as it is, visible. */
    RECOVERY_EVENT_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(1000).default(20),
    /** The worker's CPU priority (nice, 0 = as the web processes): background sending yields to requests on shared cores. */
    WORKER_NICE: z.coerce.number().int().min(0).max(19).default(10),
    /** The worker's event log thread (handlers, outgoing webhooks): its own priority, the web processes' by default. */
    WORKER_EVENTS_NICE: z.coerce.number().int().min(0).max(19).default(0),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .superRefine((v, ctx) => {
    if (v.NODE_ENV !== 'production') return;
    for (const name of ['PLATFORM_API_KEY', 'SESSION_SECRET'] as const) {
      if (!v[name]) ctx.addIssue({ code: 'custom', path: [name], message: 'is required in production' });
    }
    if (v.SMS_PROVIDER === 'twilio' || v.TWILIO_ACCOUNT_SID) {
      if (!v.TWILIO_AUTH_TOKEN) ctx.addIssue({ code: 'custom', path: ['TWILIO_AUTH_TOKEN'], message: 'is required with Twilio' });
    }
    if (v.EMAIL_PROVIDER === 'smtp' && !v.SMTP_URL) {
      ctx.addIssue({ code: 'custom', path: ['SMTP_URL'], message: 'is required when EMAIL_PROVIDER is smtp' });
    }
  });

/** Twilio's documented test-credential style token: sandbox webhooks are signed with it in development. */
const DEV_TWILIO_AUTH_TOKEN = 'sandbox-dev-auth-token-not-secret';
const DEV_EMAIL_INBOUND_SECRET = 'dev-inbound-secret';

export type Env = ReturnType<typeof derive>;

function derive(raw: z.output<typeof schema>) {
  const production = raw.NODE_ENV === 'production';
  const publicBaseUrl = trimEnd(raw.PUBLIC_BASE_URL ?? `http://localhost:${raw.PORT}`, '/');
  const sessionSecret = raw.SESSION_SECRET ?? 'development-session-secret-not-for-production';
  const smsProvider = raw.SMS_PROVIDER ?? (raw.TWILIO_ACCOUNT_SID ? 'twilio' : 'sandbox');
  const emailProvider = raw.EMAIL_PROVIDER ?? (raw.SMTP_URL ? 'smtp' : 'sandbox');
  // A production build on the sandbox providers (no Twilio, no SMTP: the e2e suite, a demo) still
  // verifies the /sandbox page's signed webhooks, with secrets derived from SESSION_SECRET: the
  // fixed development values are public, these are not.
  const sandboxSecret = (purpose: string) => createHmac('sha256', sessionSecret).update(`sandbox:${purpose}`).digest('base64url');
  return {
    nodeEnv: raw.NODE_ENV,
    production,
    databaseUrl: raw.DATABASE_URL,
    databasePrepare: raw.DATABASE_PREPARE === 'true',
    databasePoolSize: raw.DATABASE_POOL_SIZE,
    databaseHotPoolSize: raw.DATABASE_HOT_POOL_SIZE,
    databaseListenUrl: raw.DATABASE_LISTEN_URL ?? raw.DATABASE_URL,
    port: raw.PORT,
    publicBaseUrl,
    publicOrigin: new URL(publicBaseUrl).origin,
    secureCookies: publicBaseUrl.startsWith('https:'),
    platformApiKey: raw.PLATFORM_API_KEY,
    sessionSecret,
    // Its own key, or one derived from SESSION_SECRET under its own label: an HMAC of the secret is
    // independent of it and of the other derived keys, so the session secret is never the signing
    // key itself, and setting MEDIA_URL_SECRET later changes nothing but the URLs (hours-lived).
    mediaUrlSecret: raw.MEDIA_URL_SECRET ?? createHmac('sha256', sessionSecret).update('mms-media-url').digest('base64url'),
    mediaStorageQuotaBytes: raw.MEDIA_STORAGE_QUOTA_BYTES,
    smsProvider,
    twilio: {
      accountSid: raw.TWILIO_ACCOUNT_SID,
      authToken:
        raw.TWILIO_AUTH_TOKEN ??
        (!production ? DEV_TWILIO_AUTH_TOKEN : smsProvider === 'sandbox' ? sandboxSecret('twilio-auth-token') : undefined),
      apiKeySid: raw.TWILIO_API_KEY_SID,
      apiKeySecret: raw.TWILIO_API_KEY_SECRET,
      twimlAppSid: raw.TWILIO_TWIML_APP_SID,
      apiBaseUrl: raw.TWILIO_API_BASE_URL,
    },
    emailProvider,
    smtpUrl: raw.SMTP_URL,
    notificationEmailFrom: raw.NOTIFICATION_EMAIL_FROM ?? `notifications@${new URL(publicBaseUrl).hostname}`,
    sendgridWebhookPublicKey: raw.SENDGRID_WEBHOOK_PUBLIC_KEY,
    emailInboundSecret:
      raw.EMAIL_INBOUND_SECRET ??
      (!production ? DEV_EMAIL_INBOUND_SECRET : emailProvider === 'sandbox' ? sandboxSecret('email-inbound-secret') : undefined),
    /** /sandbox outside production, or in production only when asked for (docs/api.md#sandbox). */
    sandboxAllowed: !production || raw.SANDBOX_ENABLED === 'true',
    webhookAllowPrivateUrls: raw.WEBHOOK_ALLOW_PRIVATE_URLS === 'true',
    rateLimitPerMinute: raw.RATE_LIMIT_PER_MINUTE,
    eventStreamsPerSession: raw.EVENT_STREAMS_PER_SESSION,
    eventStreamsPerBusiness: raw.EVENT_STREAMS_PER_BUSINESS,
    eventStreamMaxUnsentBytes: raw.EVENT_STREAM_MAX_UNSENT_KIB * 1024,
    rateLimitPerBusinessPerMinute:
      raw.RATE_LIMIT_PER_BUSINESS_PER_MINUTE ?? Math.min(10 * raw.RATE_LIMIT_PER_MINUTE, 2_000_000_000),
    authTokensPerBusinessPerMinute: raw.AUTH_TOKENS_PER_BUSINESS_PER_MINUTE,
    eventRetentionDays: raw.EVENT_RETENTION_DAYS,
    logLevel: raw.LOG_LEVEL,
    workerMaintenanceIntervalSeconds: raw.WORKER_MAINTENANCE_INTERVAL_SECONDS,
    shutdownTimeoutSeconds: raw.SHUTDOWN_TIMEOUT_SECONDS,
    recoverySweepIntervalSeconds: raw.RECOVERY_SWEEP_INTERVAL_SECONDS,
    recoveryOrphanedSendSeconds: raw.RECOVERY_ORPHANED_SEND_SECONDS,
    recoveryEventMaxAttempts: raw.RECOVERY_EVENT_MAX_ATTEMPTS,
    workerNice: raw.WORKER_NICE,
    workerEventsNice: raw.WORKER_EVENTS_NICE,
  } as const;
}

export class ConfigError extends Error {}

/** Parses a given environment; throws ConfigError naming every bad variable. */
export function parseEnv(source: Record<string, string | undefined>): Env {
  const result = schema.safeParse(source);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.') || '(environment)'}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return derive(result.data);
}

let cached: Env | undefined;

export function env(): Env {
  cached ??= parseEnv(process.env);
  return cached;
}

/** Entry points call this first: prints the problem and exits instead of failing later. */
export function loadEnv(): Env {
  try {
    return env();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}
