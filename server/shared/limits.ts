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

/**
 * Pictures we store for MMS (docs/api.md#mms-uploads): one upload, and all the pictures of one
 * message together, are at most Twilio's 5 MB per message, read as 5,000,000 bytes (the stricter
 * reading: Twilio refuses a message over its limit after we accepted it).
 */
export const MMS_MAX_BYTES = 5_000_000;

/** Pictures and files of one MMS: media_urls and uploaded media together (Twilio's 10 MediaUrl). */
export const MMS_MAX_MEDIA = 10;

/**
 * What may be uploaded for MMS: the picture types Twilio formats for delivery to any handset
 * (other types go through only up to 500 KB, and not to every device).
 */
export const MMS_UPLOAD_TYPES = ['image/jpeg', 'image/png', 'image/gif'] as const;
export type MmsUploadType = (typeof MMS_UPLOAD_TYPES)[number];

/** The longest message search term. Not in the spec: bounds the work one request can ask of the trigram index. */
export const MAX_SEARCH_TERM_LENGTH = 200;

/**
 * How long a signed MMS media URL works (server/services/messages/media-links.ts): Twilio fetches the media when it sends the message, which may be up
 * to its longest queue time (a message's validity period, at most 4 hours by default) after we
 * handed it over; 6 hours leaves room beyond that. Retries of our own send get a fresh URL.
 */
export const MEDIA_URL_TTL_SECONDS = 6 * 3600;

/** The longest opt-out or opt-in note (docs/api.md#opt-out): the client's words, or the reason staff give for an opt-out. */
export const MAX_OPT_OUT_NOTE_LENGTH = 2000;

/** The most staff one note may @mention (docs/api.md#mentions). */
export const MAX_NOTE_MENTIONS = 20;
/** The longest name fragment after `@` the mention picker searches for, and the most names it offers. */
export const MENTION_QUERY_MAX_LENGTH = 30;
export const MENTION_OPTIONS_MAX = 8;
