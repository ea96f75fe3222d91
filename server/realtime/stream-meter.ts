import { env } from '@/server/env';

/**
 * The meter of the live event streams open on this web process: every stream
 * (server/realtime/event-stream.ts) is admitted here by the LISTEN hub's `subscribeBusiness`
 * (server/realtime/listen.ts), so no stream receives an event without being counted. Without it one staff session could open hundreds of streams a
 * minute and hold them for hours, filling the balancer's connections (docs/api.md#live-events).
 *
 * - At most EVENT_STREAMS_PER_SESSION streams per session (a staff member's tabs): one more ends the
 *   session's oldest, which its client does not retry by itself (STREAM_SUPERSEDED).
 * - At most EVENT_STREAMS_PER_BUSINESS per business: past it a new stream is refused, unless it
 *   takes the place of its own session's oldest (a new tab always opens).
 * - At most EVENT_STREAM_MAX_UNSENT_KIB waiting unsent per stream: the stream measures its socket's
 *   backlog against `streamLimits().maxUnsentBytes` and cuts a reader that falls further behind.
 *
 * Counts are per web process (in memory, like the streams themselves): behind a balancer a session
 * may hold up to the cap on each process.
 *
 * The meter lives on `globalThis`, as the LISTEN hub does: should this module be loaded twice in one
 * process (a bundler's copy beside the web server's), one meter still counts every stream; for the
 * same reason its answers are plain values, never errors to be told apart with `instanceof`.
 */
export type StreamLimits = { perSession: number; perBusiness: number; maxUnsentBytes: number };

export type MeteredStream = {
  sessionId: number;
  businessId: number;
  /** Called once when a newer stream of the same session takes this one's place. */
  supersede: () => void;
};

export type Admission = { ok: true; release: () => void } | { ok: false; message: string };

export function streamLimits(): StreamLimits {
  const config = env();
  return {
    perSession: config.eventStreamsPerSession,
    perBusiness: config.eventStreamsPerBusiness,
    maxUnsentBytes: config.eventStreamMaxUnsentBytes,
  };
}

export class StreamMeter {
  /** Each session's open streams, oldest first. */
  private readonly bySession = new Map<number, MeteredStream[]>();
  private readonly byBusiness = new Map<number, number>();

  constructor(private readonly limits: () => StreamLimits = streamLimits) {}

  /**
   * Counts `stream` in, ending (`supersede`) its session's oldest streams as needed, or refuses it
   * when its business is full. `release` (idempotent) is called when the stream ends for any reason.
   */
  admit(stream: MeteredStream): Admission {
    const { perSession, perBusiness } = this.limits();
    const ofSession = this.bySession.get(stream.sessionId) ?? [];
    const superseded = ofSession.slice(0, Math.max(0, ofSession.length - perSession + 1));
    const ofBusiness = this.byBusiness.get(stream.businessId) ?? 0;
    if (ofBusiness - superseded.length >= perBusiness)
      return {
        ok: false,
        message:
          `This business has ${ofBusiness} live event streams open, the most allowed ` +
          `(EVENT_STREAMS_PER_BUSINESS=${perBusiness}); close an inbox tab or try again later`,
      };
    // Counted out before they are told, so a stream ended here never frees a slot twice.
    for (const old of superseded) this.remove(old);
    const entry = { ...stream };
    this.bySession.set(stream.sessionId, [...(this.bySession.get(stream.sessionId) ?? []), entry]);
    this.byBusiness.set(stream.businessId, (this.byBusiness.get(stream.businessId) ?? 0) + 1);
    for (const old of superseded) old.supersede();
    return { ok: true, release: () => this.remove(entry) };
  }

  /** Streams open on this process: all of them, or one session's or one business's. */
  count(of?: { sessionId: number } | { businessId: number }): number {
    if (!of) return [...this.byBusiness.values()].reduce((sum, n) => sum + n, 0);
    if ('sessionId' in of) return this.bySession.get(of.sessionId)?.length ?? 0;
    return this.byBusiness.get(of.businessId) ?? 0;
  }

  private remove(entry: MeteredStream) {
    const ofSession = this.bySession.get(entry.sessionId);
    const at = ofSession?.indexOf(entry) ?? -1;
    if (!ofSession || at < 0) return; // already released or superseded
    ofSession.splice(at, 1);
    if (ofSession.length === 0) this.bySession.delete(entry.sessionId);
    const ofBusiness = (this.byBusiness.get(entry.businessId) ?? 1) - 1;
    if (ofBusiness > 0) this.byBusiness.set(entry.businessId, ofBusiness);
    else this.byBusiness.delete(entry.businessId);
  }
}

const globalForMeter = globalThis as unknown as { __eventStreamMeter?: StreamMeter };

/** This process's meter (see above for why it is shared through `globalThis`). */
export function streamMeter(): StreamMeter {
  return (globalForMeter.__eventStreamMeter ??= new StreamMeter());
}
