import { describe, expect, it } from 'vitest';
import { mentionedIn } from './mentions-in-text';

const sam = { staffId: 1, name: 'Sam' };
const samStylist = { staffId: 2, name: 'Sam Stylist' };
const ana = { staffId: 3, name: 'Ana López' };

describe('the mentions a note’s text still holds', () => {
  it('the chosen names still in the text, in the order chosen', () => {
    expect(mentionedIn([ana, sam], 'Thanks @Sam and @Ana López!')).toEqual([3, 1]);
    expect(mentionedIn([ana, sam], 'Thanks @Sam')).toEqual([1]);
    expect(mentionedIn([ana], 'Thanks Ana López')).toEqual([]);
  });

  it('a name only as a whole: not a shorter chosen name inside a longer one, not one the text goes on from', () => {
    expect(mentionedIn([sam, samStylist], 'Can you call her, @Sam Stylist?')).toEqual([2]);
    expect(mentionedIn([sam, samStylist], '@Sam Stylist and @Sam')).toEqual([1, 2]);
    expect(mentionedIn([sam], 'Ask @Samantha')).toEqual([]);
    expect(mentionedIn([sam], 'Ask @Samantha, then @Sam.')).toEqual([1]);
    expect(mentionedIn([ana], '@Ana Lópezs')).toEqual([]);
  });
});
