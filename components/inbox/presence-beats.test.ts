import { describe, expect, it } from 'vitest';
import { PRESENCE_BEAT_MS, PRESENCE_TYPING_GAP_MS, PRESENCE_TYPING_IDLE_MS } from '@/server/shared/presence';
import { beatToSend, type BeatInput } from './presence-beats';

/** A visible tab with an empty draft, at 100 s, which beat `viewing` at 100 s. */
const at = (over: Partial<BeatInput> = {}): BeatInput => ({
  now: 100_000,
  hidden: false,
  draft: '',
  typedAt: 0,
  kind: 'replying',
  last: { state: 'viewing', at: 100_000 },
  ...over,
});

describe('the presence beats of the open conversation', () => {
  it('viewing as it opens, then every 10 seconds, not between', () => {
    expect(PRESENCE_BEAT_MS).toBe(10_000);
    expect(beatToSend(at({ last: { state: null, at: 0 } }))).toBe('viewing');
    expect(beatToSend(at({ now: 109_999 }))).toBeNull();
    expect(beatToSend(at({ now: 110_000 }))).toBe('viewing');
  });

  it('replying or noting while a draft was typed in within 8 seconds; at most one change to typing per 3 seconds', () => {
    expect([PRESENCE_TYPING_IDLE_MS, PRESENCE_TYPING_GAP_MS]).toEqual([8_000, 3_000]);
    const typed = { draft: 'Sure', typedAt: 101_000 };
    // 1 s after the last beat: held until 3 s have passed since it.
    expect(beatToSend(at({ ...typed, now: 101_000 }))).toBeNull();
    expect(beatToSend(at({ ...typed, now: 103_000 }))).toBe('replying');
    expect(beatToSend(at({ ...typed, now: 103_000, kind: 'noting' }))).toBe('noting');
    // Still typing: the state beats like viewing, every 10 s.
    const replying = { state: 'replying' as const, at: 103_000 };
    expect(beatToSend(at({ draft: 'Sure, ', typedAt: 108_000, now: 108_000, last: replying }))).toBeNull();
    expect(beatToSend(at({ draft: 'Sure, 4', typedAt: 112_000, now: 113_000, last: replying }))).toBe('replying');
    // From replying to noting is a change to typing: the gap holds it too.
    expect(beatToSend(at({ ...typed, kind: 'noting', now: 104_000, last: replying }))).toBeNull();
  });

  it('viewing again at once when the draft is cleared or goes idle 8 seconds', () => {
    const replying = { state: 'replying' as const, at: 103_000 };
    expect(beatToSend(at({ draft: '', typedAt: 0, now: 103_500, last: replying }))).toBe('viewing');
    expect(beatToSend(at({ draft: 'Sure', typedAt: 102_000, now: 109_999, last: replying }))).toBeNull();
    expect(beatToSend(at({ draft: 'Sure', typedAt: 102_000, now: 110_000, last: replying }))).toBe('viewing');
  });

  it('left once when the tab hides; viewing at once when it shows again', () => {
    expect(beatToSend(at({ hidden: true, now: 100_500 }))).toBe('left');
    const left = { state: 'left' as const, at: 100_500 };
    expect(beatToSend(at({ hidden: true, now: 130_000, last: left }))).toBeNull();
    expect(beatToSend(at({ now: 100_600, last: left }))).toBe('viewing');
    // Typing straight after coming back: no gap after a `left`.
    expect(beatToSend(at({ draft: 'x', typedAt: 100_600, now: 100_600, last: left }))).toBe('replying');
    // Hidden before any beat: nothing to take back.
    expect(beatToSend(at({ hidden: true, last: { state: null, at: 0 } }))).toBeNull();
  });
});
