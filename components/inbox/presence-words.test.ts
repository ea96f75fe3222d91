import { describe, expect, it } from 'vitest';
import { firstName, presenceTitle, typingLine } from './presence-words';

const staff: Record<number, string> = { 1: 'Ana Lopez', 2: 'Ben Ito', 3: 'Cy Park' };
const nameOf = (id: number) => staff[id];

describe('presence in words', () => {
  it('says who is typing a reply or a note, by first name; nothing when nobody types', () => {
    expect(typingLine([{ staffId: 1, state: 'viewing' }], nameOf)).toBe('');
    expect(typingLine([{ staffId: 1, state: 'replying' }], nameOf)).toBe('Ana is replying…');
    expect(
      typingLine(
        [
          { staffId: 1, state: 'replying' },
          { staffId: 2, state: 'replying' },
          { staffId: 3, state: 'noting' },
        ],
        nameOf,
      ),
    ).toBe('Ana and Ben are replying… · Cy is writing a note…');
    expect(typingLine([{ staffId: 9, state: 'noting' }], nameOf)).toBe('A colleague is writing a note…');
  });

  it('names a colleague the staff list does not have yet', () => {
    expect(firstName(undefined)).toBe('A colleague');
    expect(presenceTitle(undefined, 'viewing')).toBe('A colleague is viewing');
    expect(presenceTitle('Ana Lopez', 'replying')).toBe('Ana Lopez is replying');
  });
});
