import {
  PRESENCE_BEAT_MS,
  PRESENCE_TYPING_GAP_MS,
  PRESENCE_TYPING_IDLE_MS,
  type PresenceBeatState,
  type PresenceState,
} from '@/server/shared/presence';

/**
 * When the open conversation's tab beats, and what (docs/api.md#presence), decided once a second
 * and on each change of the draft or the tab's visibility (presence.tsx): `viewing` when it opens
 * and every PRESENCE_BEAT_MS while the tab is visible; `replying` or `noting` (the composer's mode)
 * while the draft is not empty and was typed in within PRESENCE_TYPING_IDLE_MS, at most one change to
 * typing per PRESENCE_TYPING_GAP_MS; `viewing` again at once when the draft is cleared (sent) or goes
 * idle; `left` once when the tab hides, and `viewing` at once when it shows again. Pure: the clock
 * and the tab are arguments.
 */
export type BeatInput = {
  now: number;
  hidden: boolean;
  draft: string;
  /** When the draft last changed to something not empty (0: never, or cleared). */
  typedAt: number;
  kind: 'replying' | 'noting';
  /** The last beat sent, and when (state null: none yet on this conversation). */
  last: { state: PresenceBeatState | null; at: number };
};

/** The beat to send now, or null for none. */
export function beatToSend({ now, hidden, draft, typedAt, kind, last }: BeatInput): PresenceBeatState | null {
  if (hidden) return last.state !== null && last.state !== 'left' ? 'left' : null;
  const typing = draft !== '' && now - typedAt < PRESENCE_TYPING_IDLE_MS;
  const state: PresenceState = typing ? kind : 'viewing';
  if (state === last.state) return now - last.at >= PRESENCE_BEAT_MS ? state : null;
  // Into typing, at most once per gap (the next tick tries again); out of it, at once.
  if (state !== 'viewing' && last.state !== 'left' && now - last.at < PRESENCE_TYPING_GAP_MS) return null;
  return state;
}
