/**
 * Presence: which colleagues have a conversation open and who of them is typing a reply or a note
 * (docs/api.md#live-events, docs/architecture.md#realtime). Not a change, so never an event of the
 * log: the inbox beats `presence.beat` while a conversation is open, each web process keeps what the
 * beats said for PRESENCE_TTL_MS, and the live stream carries `presence` frames. Shared by the server
 * and the inbox, so this module is bundled for the browser too: no imports.
 */

/** What a beat says: looking at the conversation, typing a reply, typing a note; `left` ends it at once. */
export const PRESENCE_STATES = ['viewing', 'replying', 'noting', 'left'] as const;
export type PresenceBeatState = (typeof PRESENCE_STATES)[number];
/** What a colleague shows as. */
export type PresenceState = Exclude<PresenceBeatState, 'left'>;

/**
 * How long a beat holds: a tab closed (or a laptop asleep) sends nothing, so its presence ends
 * PRESENCE_TTL_MS after its last beat (plus at most PRESENCE_SWEEP_MS). Three beat intervals: a
 * beat or two lost on a poor connection do not make a colleague blink out.
 */
export const PRESENCE_TTL_MS = 30_000;
/** How often the inbox beats while a conversation is open and the tab is visible. */
export const PRESENCE_BEAT_MS = 10_000;
/** How often a web process looks for presences past their time. */
export const PRESENCE_SWEEP_MS = 1_000;
/** Typing beats: at most one per this while the state changes (typing, stopping, switching to a note). */
export const PRESENCE_TYPING_GAP_MS = 3_000;
/** Typing stops counting as "replying…" this long after the last keystroke, even with a draft left. */
export const PRESENCE_TYPING_IDLE_MS = 8_000;

/** The colleagues on one conversation, ascending by staff id; the frame's recipient is never among them. */
export type ConversationPresence = { conversationId: number; staff: { staffId: number; state: PresenceState }[] };

/**
 * The live stream's `presence` frame. `snapshot`: every conversation of the business with someone on
 * it (the first presence frame of each stream; the inbox replaces what it knew); otherwise the
 * conversations whose presence changed, each with its full list (empty: nobody is there any more).
 */
export type PresenceFrame = {
  type: 'presence';
  businessId: number;
  snapshot: boolean;
  conversations: ConversationPresence[];
};
