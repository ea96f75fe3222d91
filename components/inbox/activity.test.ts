import { describe, expect, it } from 'vitest';
import { activitySince, interleave } from './activity';

describe('the timeline interleaves activity lines with messages', () => {
  const m = (id: number, sent_at: string) => ({ id, sent_at });
  const a = (id: string, occurred_at: string) => ({ id, occurred_at });

  it('by time, a line after the message of the same instant, lines before and after all messages kept', () => {
    const messages = [m(1, '2026-05-01T10:00:00.000Z'), m(2, '2026-05-01T11:00:00.000Z'), m(3, '2026-05-01T12:00:00.000Z')];
    const lines = [
      a('before', '2026-05-01T09:00:00.000Z'),
      a('same', '2026-05-01T11:00:00.000Z'),
      a('between', '2026-05-01T11:30:00.000Z'),
      a('after', '2026-05-01T13:00:00.000Z'),
    ];
    expect(interleave(messages, lines).map((i) => (i.kind === 'message' ? i.item.id : i.item.id))).toEqual([
      'before',
      1,
      2,
      'same',
      'between',
      3,
      'after',
    ]);
    expect(interleave([], lines).map((i) => i.kind)).toEqual(['activity', 'activity', 'activity', 'activity']);
    expect(interleave(messages, []).map((i) => i.at)).toEqual(messages.map((x) => x.sent_at));
  });

  it('asks for lines from the oldest loaded message while earlier pages remain, else all', () => {
    expect(activitySince('2026-05-01T10:00:00.000Z', true)).toBe('2026-05-01T10:00:00.000Z');
    expect(activitySince('2026-05-01T10:00:00.000Z', false)).toBeNull();
    expect(activitySince(undefined, true)).toBeNull();
  });
});
