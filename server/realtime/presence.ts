import { logger } from '@/server/logger';
import { parseBeat, PRESENCE_CHANNEL, type PresenceBeat } from '@/server/services/presence';
import {
  PRESENCE_SWEEP_MS,
  PRESENCE_TTL_MS,
  type ConversationPresence,
  type PresenceFrame,
  type PresenceState,
} from '@/server/shared/presence';
import { listenOn } from './listen';
import { presenceFrame } from './trpc-sse';

/**
 * Presence on a web process (docs/architecture.md#realtime): every process LISTENs on
 * PRESENCE_CHANNEL, where each beat of every staff member arrives (server/services/presence.ts), keeps
 * what the beats said in a registry for PRESENCE_TTL_MS after each, and writes a `presence` frame to
 * the streams of the beat's business when what they show changes: someone arrives, starts or stops
 * typing, leaves, or their time runs out (a closed tab beats no more). A beat that only says "still
 * here" changes nothing and writes nothing, so the steady cost of a beat is a NOTIFY parsed and a
 * map entry updated. Each process counts time from when a beat reached it, so processes agree to
 * within the NOTIFY's delay whatever their clocks say.
 *
 * A staff member never sees themselves: each stream's frames leave out its own staff member (the
 * frame of a change is serialized once for the streams it does not name, and once per named staff
 * member for theirs). Only streams of the beat's business get it.
 */

type Seen = { state: PresenceState; expiresAt: number };
type Where = { businessId: number; conversationId: number };

/** What the beats said, by business, conversation and staff member; `now` is the clock (tests fake it). */
export class PresenceRegistry {
  private readonly businesses = new Map<number, Map<number, Map<number, Seen>>>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly ttlMs = PRESENCE_TTL_MS,
  ) {}

  /** Takes a beat; true when what colleagues see of its conversation changed (not a mere "still here"). */
  apply(beat: PresenceBeat): boolean {
    let conversations = this.businesses.get(beat.businessId);
    let staff = conversations?.get(beat.conversationId);
    const before = staff?.get(beat.staffId);
    if (beat.state === 'left') {
      if (!before) return false;
      staff!.delete(beat.staffId);
      if (staff!.size === 0) this.drop(beat);
      return true;
    }
    if (!conversations) this.businesses.set(beat.businessId, (conversations = new Map()));
    if (!staff) conversations.set(beat.conversationId, (staff = new Map()));
    staff.set(beat.staffId, { state: beat.state, expiresAt: this.now() + this.ttlMs });
    return before?.state !== beat.state;
  }

  /** Forgets what is past its time; the conversations whose presence changed. */
  sweep(): Where[] {
    const now = this.now();
    const changed: Where[] = [];
    for (const [businessId, conversations] of this.businesses) {
      for (const [conversationId, staff] of conversations) {
        let expired = false;
        for (const [staffId, seen] of staff) {
          if (seen.expiresAt > now) continue;
          staff.delete(staffId);
          expired = true;
        }
        if (!expired) continue;
        changed.push({ businessId, conversationId });
        if (staff.size === 0) this.drop({ businessId, conversationId });
      }
    }
    return changed;
  }

  /** Who is on a conversation, ascending by staff id, leaving out `viewer`. */
  on(businessId: number, conversationId: number, viewer?: number): ConversationPresence['staff'] {
    const staff = this.businesses.get(businessId)?.get(conversationId);
    if (!staff) return [];
    return [...staff]
      .filter(([staffId]) => staffId !== viewer)
      .sort(([a], [b]) => a - b)
      .map(([staffId, seen]) => ({ staffId, state: seen.state }));
  }

  /** Every conversation of the business with someone on it but `viewer`, ascending by id. */
  snapshot(businessId: number, viewer: number): ConversationPresence[] {
    const conversations = this.businesses.get(businessId);
    if (!conversations) return [];
    return [...conversations.keys()]
      .sort((a, b) => a - b)
      .map((conversationId) => ({ conversationId, staff: this.on(businessId, conversationId, viewer) }))
      .filter((c) => c.staff.length > 0);
  }

  /** Staff members present, over all businesses (diagnostics, the benchmark). */
  size(): number {
    let n = 0;
    for (const conversations of this.businesses.values()) for (const staff of conversations.values()) n += staff.size;
    return n;
  }

  private drop({ businessId, conversationId }: Where) {
    const conversations = this.businesses.get(businessId)!;
    conversations.delete(conversationId);
    if (conversations.size === 0) this.businesses.delete(businessId);
  }
}

/** A stream of a staff member: gets its business's presence frames, serialized (trpc-sse.ts). */
export type PresenceSubscriber = { businessId: number; staffId: number; push: (frame: Buffer) => void };

export type PresenceHub = {
  registry: PresenceRegistry;
  /** Subscribes a stream: it gets its business's snapshot at once, then each change. */
  subscribe: (subscriber: PresenceSubscriber) => () => void;
  /** A NOTIFY payload from PRESENCE_CHANNEL. */
  receive: (payload: string) => void;
  /** Stops sweeping (tests). */
  stop: () => void;
};

/**
 * A registry with its subscribers and its sweep. `listen` subscribes `receive` to the channel: the
 * process's LISTEN connection (presenceHub), or a connection of a test's own standing for another
 * web process.
 */
export function createPresenceHub(opts: {
  listen: (onNotify: (payload: string) => void) => void;
  now?: () => number;
  ttlMs?: number;
  sweepMs?: number;
}): PresenceHub {
  const registry = new PresenceRegistry(opts.now, opts.ttlMs);
  const subscribers = new Map<number, Set<PresenceSubscriber>>();

  /** Writes the conversation's presence to its business's streams, but to `skip`'s own (their view did not change). */
  function publish({ businessId, conversationId }: Where, skip?: number) {
    const streams = subscribers.get(businessId);
    if (!streams) return;
    const staff = registry.on(businessId, conversationId);
    const named = new Set(staff.map((s) => s.staffId));
    // One serialization for the streams the list does not name, one per named staff member for theirs.
    const frames = new Map<number | null, Buffer>();
    const frameFor = (viewer: number | null) => {
      let bytes = frames.get(viewer);
      if (!bytes) {
        const frame: PresenceFrame = {
          type: 'presence',
          businessId,
          snapshot: false,
          conversations: [{ conversationId, staff: viewer === null ? staff : staff.filter((s) => s.staffId !== viewer) }],
        };
        frames.set(viewer, (bytes = presenceFrame(frame)));
      }
      return bytes;
    };
    for (const s of streams) if (s.staffId !== skip) s.push(frameFor(named.has(s.staffId) ? s.staffId : null));
  }

  function receive(payload: string) {
    const beat = parseBeat(payload);
    if (!beat) {
      logger.warn({ payload: payload.slice(0, 100) }, 'presence: not a beat');
      return;
    }
    if (registry.apply(beat)) publish(beat, beat.staffId);
  }

  const sweeper = setInterval(() => {
    for (const where of registry.sweep()) publish(where);
  }, opts.sweepMs ?? PRESENCE_SWEEP_MS);
  sweeper.unref?.();
  opts.listen(receive);

  return {
    registry,
    receive,
    subscribe(subscriber) {
      let set = subscribers.get(subscriber.businessId);
      if (!set) subscribers.set(subscriber.businessId, (set = new Set()));
      set.add(subscriber);
      const frame: PresenceFrame = {
        type: 'presence',
        businessId: subscriber.businessId,
        snapshot: true,
        conversations: registry.snapshot(subscriber.businessId, subscriber.staffId),
      };
      subscriber.push(presenceFrame(frame));
      const mine = set;
      return () => {
        mine.delete(subscriber);
        if (mine.size === 0 && subscribers.get(subscriber.businessId) === mine) subscribers.delete(subscriber.businessId);
      };
    },
    stop: () => clearInterval(sweeper),
  };
}

const globalForPresence = globalThis as unknown as { __presence?: PresenceHub };

/**
 * The process's presence, LISTENing from the first stream that subscribes (a process with no streams
 * has nobody to tell). A process that starts knows nobody yet: each colleague appears at their next
 * beat, within PRESENCE_BEAT_MS.
 */
export function presenceHub(): PresenceHub {
  return (globalForPresence.__presence ??= createPresenceHub({
    listen: (onNotify) => void listenOn(PRESENCE_CHANNEL, onNotify, () => {}),
  }));
}
