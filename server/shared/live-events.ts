/**
 * How a live events stream (`inbox.events`) can end, in the tRPC error codes its client reads
 * (docs/api.md#live-events). Shared by the stream (server/realtime/event-stream.ts) and the inbox, so this module is
 * bundled for the browser too: no imports.
 */

/**
 * The session opened more streams than it may (EVENT_STREAMS_PER_SESSION): its oldest ends with
 * this code. The inbox does not reconnect by itself, or two tabs past the cap would take the stream
 * from each other forever; it shows "Opened in another tab" with a button that reconnects.
 */
export const STREAM_SUPERSEDED = {
  code: 'CONFLICT',
  message: 'Opened in another tab: this session has the most live streams it may hold open',
} as const;

/**
 * The business already holds the most streams it may (EVENT_STREAMS_PER_BUSINESS): a new one is
 * refused with this code (429). The inbox tries again with its usual backoff (up to 15 s apart).
 */
export const STREAM_REFUSED_CODE = 'TOO_MANY_REQUESTS';
