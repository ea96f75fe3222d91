import { describe, expect, it } from 'vitest';
import { env } from '@/server/env';
import { StreamMeter, streamLimits, type Admission } from './stream-meter';

/**
 * The stream meter both live-event implementations share: a session's streams past its cap end its
 * oldest, a full business refuses new streams (except a session replacing its own oldest), and every
 * stream frees its slot exactly once however it ends. Each implementation's use of it is tested
 * beside it (event-stream.test.ts, server/trpc/inbox-events.test.ts).
 */
const limits = { perSession: 3, perBusiness: 5, maxUnsentBytes: 1024 };

function opener(meter: StreamMeter) {
  const superseded: string[] = [];
  const open = (name: string, sessionId: number, businessId = 1): Admission =>
    meter.admit({ sessionId, businessId, supersede: () => superseded.push(name) });
  return { open, superseded };
}

const released = (a: Admission) => {
  if (!a.ok) throw new Error(`refused: ${a.message}`);
  return a.release;
};

describe('stream meter', () => {
  it('ends the oldest stream of a session that opens one past its cap, and only that one', () => {
    const meter = new StreamMeter(() => limits);
    const { open, superseded } = opener(meter);
    for (const name of ['a1', 'a2', 'a3']) expect(open(name, 10).ok).toBe(true);
    open('b1', 11);
    expect(superseded).toEqual([]);
    expect(open('a4', 10).ok).toBe(true);
    expect(superseded).toEqual(['a1']);
    expect(meter.count({ sessionId: 10 })).toBe(3);
    expect(open('a5', 10).ok).toBe(true);
    expect(superseded).toEqual(['a1', 'a2']);
    expect(meter.count({ sessionId: 11 })).toBe(1);
  });

  it('refuses a new stream once its business is full, but lets a session replace its own oldest', () => {
    const meter = new StreamMeter(() => limits);
    const { open, superseded } = opener(meter);
    for (const [name, session] of [
      ['a1', 10],
      ['a2', 10],
      ['a3', 10],
      ['b1', 11],
      ['b2', 11],
    ] as const)
      expect(open(name, session).ok).toBe(true);
    const refused = open('c1', 12);
    expect(refused).toEqual({ ok: false, message: expect.stringContaining('EVENT_STREAMS_PER_BUSINESS=5') });
    expect(open('b3', 11).ok).toBe(false); // b is under its own cap: it would add one
    expect(open('x1', 13, 2).ok).toBe(true); // another business is not affected
    expect(open('a4', 10).ok).toBe(true); // a new tab of a full session takes its oldest's place
    expect(superseded).toEqual(['a1']);
    expect(meter.count({ businessId: 1 })).toBe(5);
  });

  it('frees a slot once per stream, whether it is released, released twice or superseded first', () => {
    const meter = new StreamMeter(() => limits);
    const { open, superseded } = opener(meter);
    const a1 = released(open('a1', 10));
    const a2 = released(open('a2', 10));
    released(open('a3', 10));
    released(open('b1', 11));
    released(open('b2', 11));
    expect(open('c1', 12).ok).toBe(false);
    a1();
    a1();
    expect(meter.count({ businessId: 1 })).toBe(4);
    const c1 = released(open('c1', 12));
    expect(open('c2', 12).ok).toBe(false);
    c1();
    // Session 10 holds a2, a3, then a4 and a5: a2 is superseded (counted out at once); its own
    // release when it has ended must not free anyone else's slot.
    released(open('a4', 10));
    expect(open('a5', 10).ok).toBe(true);
    expect(superseded).toEqual(['a2']);
    a2();
    expect(meter.count({ sessionId: 10 })).toBe(3);
    expect(meter.count()).toBe(5);
    expect(open('c2', 12).ok).toBe(false);
  });

  it('takes its caps from the configuration: 5 per session, 200 per business, 256 KiB unsent', () => {
    expect(streamLimits()).toEqual({ perSession: 5, perBusiness: 200, maxUnsentBytes: 256 * 1024 });
    expect(env().eventStreamsPerSession).toBe(5);
  });
});
