/**
 * Limits the API enforces and the browser checks before sending. This module is bundled for the
 * browser too (components/), so it stays pure: no imports.
 */

/**
 * The most procedure calls one batched tRPC request may carry. The inbox's client batches at most
 * this many (components/trpc/provider.tsx); the server refuses more before any work
 * (app/api/trpc/[trpc]/route.ts).
 */
export const MAX_TRPC_BATCH = 10;

/** The longest SMS body the API accepts, in characters (docs/api.md#limits). */
export const MAX_SMS_LENGTH = 1600;

/** The longest opt-out confirmation or HELP answer a business may set: two SMS segments (docs/api.md#opt-out-wording). */
export const AUTO_REPLY_MAX_LENGTH = 320;

/** The largest attachment the API accepts, in bytes (docs/api.md#limits: 5 MiB). */
export const MAX_ATTACHMENT_BYTES = 5 * 1024 * 1024;
